import SyncJournalProtocol

/// The membership paths of the protocol (journals/PROTOCOL.md,
/// "Membership"), shared by client and server: each a `POST` with a JSON
/// body and a token, like the sync requests.
///
/// They are kept apart from ``SyncEndpoint`` so that code switching over
/// the sync paths keeps compiling; a router looks a path up in both.
///
/// ```swift
/// let endpoint = SpaceEndpoint(rawValue: request.path)   // .setMember for "/v1/spaces/members/set"
/// ```
public enum SpaceEndpoint: String, Sendable, Hashable, CaseIterable {
    /// `POST /v1/spaces/create`: `{"space", "name"}` in, `{"space": SPACE}` out.
    case create = "/v1/spaces/create"
    /// `POST /v1/spaces/rename`: `{"space", "name"}` in, `{"space": SPACE}` out.
    case rename = "/v1/spaces/rename"
    /// `POST /v1/spaces/members/set`: `{"space", "user", "role"}` in, `{"space": SPACE}` out.
    case setMember = "/v1/spaces/members/set"
    /// `POST /v1/spaces/members/remove`: `{"space", "user"}` in, `{"space": SPACE}` out.
    case removeMember = "/v1/spaces/members/remove"
    /// `POST /v1/spaces/leave`: `{"space"}` in, `{}` out.
    case leave = "/v1/spaces/leave"
    /// `POST /v1/spaces/delete`: `{"space"}` in, `{}` out.
    case delete = "/v1/spaces/delete"
    /// `POST /v1/spaces/list`: `{}` in, `{"spaces": [SPACE, …]}` out.
    case list = "/v1/spaces/list"

    /// The absolute path.
    public var path: String { rawValue }

    /// The HTTP method every membership path takes.
    public var method: String { "POST" }

    /// Whether a 200 reply holds the space as it is after the request
    /// (`{"space": SPACE}`); a leave's and a delete's is `{}`, a list's the spaces.
    public var repliesWithSpace: Bool {
        switch self {
        case .create, .rename, .setMember, .removeMember: return true
        case .leave, .delete, .list: return false
        }
    }

    /// The path a membership change is sent to.
    ///
    /// ```swift
    /// SpaceEndpoint(.leave(space)).path   // "/v1/spaces/leave"
    /// ```
    public init(_ change: SpaceChange) {
        switch change {
        case .create: self = .create
        case .rename: self = .rename
        case .setMember: self = .setMember
        case .removeMember: self = .removeMember
        case .leave: self = .leave
        case .delete: self = .delete
        }
    }
}

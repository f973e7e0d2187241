import SyncJournalProtocol

/// The protocol's paths (`journals/PROTOCOL.md`), shared by client and
/// server: the sync paths, the membership paths of shared spaces
/// ("Membership") and the health check. Every path but ``health`` is a
/// `POST` with a JSON body and a bearer token.
///
/// ```swift
/// let url = baseURL.appendingPathComponent(SyncEndpoint.push.path)
/// let endpoint = SyncEndpoint(rawValue: request.path)   // .setSpaceMember for "/v1/spaces/members/set"
/// ```
public enum SyncEndpoint: String, Sendable, Hashable, CaseIterable {
    /// `POST /v1/sync/push`: mutations in, one result each out.
    case push = "/v1/sync/push"
    /// `POST /v1/sync/pull`: cursors in, a page of rows out.
    case pull = "/v1/sync/pull"
    /// `POST /v1/sync/read`: one row by kind and id.
    case read = "/v1/sync/read"
    /// `POST /v1/sync/wait`: cursors and a timeout in; `{"changed": BOOL}`
    /// out once this user has rows after a cursor, or when the timeout passes.
    case wait = "/v1/sync/wait"
    /// `GET /v1/health`: no token needed.
    case health = "/v1/health"
    /// `POST /v1/spaces/create`: `{"space", "name"}` in, `{"space": SPACE}` out.
    case createSpace = "/v1/spaces/create"
    /// `POST /v1/spaces/rename`: `{"space", "name"}` in, `{"space": SPACE}` out.
    case renameSpace = "/v1/spaces/rename"
    /// `POST /v1/spaces/members/set`: `{"space", "user", "role"}` in, `{"space": SPACE}` out.
    case setSpaceMember = "/v1/spaces/members/set"
    /// `POST /v1/spaces/members/remove`: `{"space", "user"}` in, `{"space": SPACE}` out.
    case removeSpaceMember = "/v1/spaces/members/remove"
    /// `POST /v1/spaces/leave`: `{"space"}` in, `{}` out.
    case leaveSpace = "/v1/spaces/leave"
    /// `POST /v1/spaces/delete`: `{"space"}` in, `{}` out.
    case deleteSpace = "/v1/spaces/delete"
    /// `POST /v1/spaces/list`: `{}` in, `{"spaces": [SPACE, …]}` out.
    case listSpaces = "/v1/spaces/list"
    /// `POST /v1/attachments/status`: `{"contents": [...]}` in, what the server holds of each out.
    case attachmentStatus = "/v1/attachments/status"
    /// `POST /v1/attachments/upload`: one chunk as the raw body, named by headers; `{"received", "stored"}` out.
    case uploadAttachment = "/v1/attachments/upload"
    /// `POST /v1/attachments/download`: `{"sha256", "offset", "length"}` in, the raw bytes out.
    case downloadAttachment = "/v1/attachments/download"

    /// The absolute path.
    public var path: String { rawValue }

    /// The HTTP method the path takes.
    public var method: String { self == .health ? "GET" : "POST" }

    /// Whether this is one of the membership paths (`/v1/spaces/…`).
    public var isMembership: Bool {
        switch self {
        case .createSpace, .renameSpace, .setSpaceMember, .removeSpaceMember, .leaveSpace, .deleteSpace, .listSpaces: return true
        case .push, .pull, .read, .wait, .health, .attachmentStatus, .uploadAttachment, .downloadAttachment: return false
        }
    }

    /// Whether a 200 reply holds the space as it is after the request
    /// (`{"space": SPACE}`): create, rename, members/set and
    /// members/remove; a leave's and a delete's is `{}`, a list's the spaces.
    public var repliesWithSpace: Bool {
        switch self {
        case .createSpace, .renameSpace, .setSpaceMember, .removeSpaceMember: return true
        default: return false
        }
    }

    /// Whether this is one of the attachment paths (`/v1/attachments/…`).
    public var isAttachment: Bool {
        switch self {
        case .attachmentStatus, .uploadAttachment, .downloadAttachment: return true
        default: return false
        }
    }

    /// The path a membership change is sent to.
    ///
    /// ```swift
    /// SyncEndpoint(.leave(space)).path   // "/v1/spaces/leave"
    /// ```
    public init(_ change: SpaceChange) {
        switch change {
        case .create: self = .createSpace
        case .rename: self = .renameSpace
        case .setMember: self = .setSpaceMember
        case .removeMember: self = .removeSpaceMember
        case .leave: self = .leaveSpace
        case .delete: self = .deleteSpace
        }
    }
}

/// The protocol's paths (`journals/PROTOCOL.md`), shared by client and server.
///
/// ```swift
/// let url = baseURL.appendingPathComponent(SyncEndpoint.push.path)
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

    /// The absolute path.
    public var path: String { rawValue }

    /// The HTTP method the path takes.
    public var method: String { self == .health ? "GET" : "POST" }
}

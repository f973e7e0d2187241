import SyncJournalWire

/// A path ``HTTPTransport`` sends to: one of the sync paths, or one of the
/// membership paths (journals/PROTOCOL.md, "Membership").
///
/// ```swift
/// let endpoint = TransportEndpoint.space(.leave)   // POST /v1/spaces/leave
/// ```
enum TransportEndpoint: Sendable, Hashable {
    /// `/v1/sync/…` or `/v1/health`.
    case sync(SyncEndpoint)
    /// `/v1/spaces/…`.
    case space(SpaceEndpoint)

    /// The absolute path.
    var path: String {
        switch self {
        case .sync(let endpoint): return endpoint.path
        case .space(let endpoint): return endpoint.path
        }
    }

    /// The HTTP method the path takes.
    var method: String {
        switch self {
        case .sync(let endpoint): return endpoint.method
        case .space(let endpoint): return endpoint.method
        }
    }

    /// Whether this is a membership path.
    var isMembership: Bool {
        if case .space = self { return true }
        return false
    }
}

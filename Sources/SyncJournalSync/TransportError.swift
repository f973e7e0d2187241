/// Why a request did not get an answer, classified so the engine knows what to do.
public enum TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No connection: a normal state, not a failure. The sync is skipped.
    case offline
    /// Worth retrying later: a timeout, an overloaded or failing server (5xx),
    /// or too many requests (429), with the server's retry-after if it gave one.
    case transient(reason: String, retryAfterMilliseconds: Int64?)
    /// The request itself is wrong or forbidden; resending it will not help.
    case permanent(reason: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .offline: return "offline"
        case .transient(let reason, let after): return "transient: \(reason)" + (after.map { " (retry after \($0) ms)" } ?? "")
        case .permanent(let reason): return "permanent: \(reason)"
        }
    }
}

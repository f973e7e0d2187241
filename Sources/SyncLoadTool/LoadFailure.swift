/// Why a load run could not start.
public enum LoadFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server cannot be reached (no connection, a timeout, a 5xx to the health check).
    case unreachable(server: String, reason: String)
    /// The server answers but refuses the token or the requests.
    case refused(server: String, reason: String)
    /// The live-latency devices failed: a store could not be opened, or an
    /// edit did not reach the second device in time.
    case liveSync(server: String, reason: String)

    /// One line for standard error.
    public var description: String {
        switch self {
        case .unreachable(let server, let reason): return "cannot reach \(server): \(reason) (is sync-server running?)"
        case .refused(let server, let reason): return "\(server) refused the first pull: \(reason)"
        case .liveSync(let server, let reason): return "live sync against \(server) failed: \(reason)"
        }
    }
}

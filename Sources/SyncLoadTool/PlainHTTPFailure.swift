import SyncJournalPlatform

/// Why a request of ``PlainHTTPConnection`` failed.
enum PlainHTTPFailure: Error, Sendable, CustomStringConvertible {
    /// No connection could be made.
    case connect(reason: String)
    /// A socket call failed (a timed-out receive is `EAGAIN`).
    case socket(call: String, Errno)
    /// The server closed the connection before the reply was whole.
    case closed(during: String)
    /// The reply is not one this client reads.
    case malformedReply(String)

    var description: String {
        switch self {
        case .connect(let reason): return "cannot connect: \(reason)"
        case .socket(let call, let error): return "\(call) failed: \(error) (\(error.message))"
        case .closed(let step): return "the server closed the connection while \(step)"
        case .malformedReply(let what): return "a reply this client cannot read: \(what)"
        }
    }
}

import SyncJournalProtocol
import SyncJournalStore

/// Why a sync stopped with an error, with what the app needs to act on it.
/// What was journaled before the failure stays; the next sync starts over.
public enum SyncFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The store refused: it was retired or closed, its journal failed, or it
    /// cannot be read.
    case store(StoreError)
    /// The transport refused the request as a whole (a permanent refusal such
    /// as a bad request, or a cursor the server keeps refusing): resending it
    /// unchanged will not help.
    case transport(TransportError)
    /// The server's reply did not make sense; nothing of it was kept.
    case malformedReply(MalformedReply)
    /// The pull stopped before the server said it had nothing more.
    case pullNotFinished(PullStop)
    /// The server refused the credentials (HTTP 401): the app must sign in
    /// again before a sync can succeed.
    case authentication(reason: String)
    /// The server is not the one this device synced with, or it went back in
    /// time: nothing was sent or charged, no record was deleted or
    /// conflicted, and syncs stop until the app runs
    /// ``SyncEngine/reconcileWithServer()``.
    case serverMismatch(ServerMismatch)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .store(let error): return error.description
        case .transport(let error): return error.description
        case .malformedReply(let reply): return reply.description
        case .pullNotFinished(let stop): return stop.description
        case .authentication(let reason): return "not signed in: \(reason)"
        case .serverMismatch(let mismatch): return "\(mismatch); reconcile to sync again"
        }
    }

    /// Whether a pull (or resync) stopped at its page limit: the replies
    /// themselves were kept, unlike a refused reply's.
    package var reachedPageLimit: Bool {
        switch self {
        case .pullNotFinished(.pageLimit), .pullNotFinished(.resyncPageLimit): return true
        default: return false
        }
    }
}

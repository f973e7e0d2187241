/// Why a request did not get an answer, classified so the engine knows what to do.
public enum TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No connection: the request did not leave the device. A normal state,
    /// not a failure: the sync is skipped. (A request that may have left,
    /// then lost its connection, is ``transient(reason:retryAfter:)``.)
    case offline
    /// The device has a network but the server did not answer: the
    /// connection was refused or timed out (the server is down, or a
    /// firewall drops the request). A request that timed out may have
    /// reached the server; operation ids make the resend safe. The engine
    /// retries with backoff, charging no operation.
    case serverUnreachable(reason: String)
    /// The server refused the credentials (HTTP 401), even after the
    /// transport asked its token provider for a fresh token. No operation is
    /// to blame; the engine pauses until the app signs in again.
    case unauthorized(reason: String)
    /// Worth retrying later: a timeout, an overloaded or failing server (5xx),
    /// or too many requests (429), with the server's retry-after if it gave one.
    case transient(reason: String, retryAfter: Duration?)
    /// The request itself is wrong or forbidden; resending it will not help.
    case permanent(reason: String)
    /// The server refused the request as too large (HTTP 413): the engine
    /// splits the batch and retries; a single operation this large fails permanently.
    case tooLarge(reason: String)
    /// A pull cursor of these kinds (in any space) is older than the
    /// server's tombstone horizon: deletions since then are forgotten, so
    /// the engine re-pulls those kinds from the start in every space (a resync).
    case cursorExpired(kinds: [String])
    /// The server is not the one the device's ``ServerExpectation`` names,
    /// or it went back in time: it applied nothing. Retrying will not help;
    /// the app reconciles the device with the server it now has.
    case serverMismatch(ServerMismatch)
    /// The server refused a membership request (journals/PROTOCOL.md,
    /// "Membership"); sending it again gets the same answer.
    case spaceRefused(SpaceRefusal)
    /// The server refused an attachment transfer (journals/PROTOCOL.md,
    /// "Attachments"): a wrong offset names where to go on from; the others
    /// say what is wrong with the content or the chunk.
    case attachmentRefused(AttachmentRefusal)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .offline: return "offline"
        case .serverUnreachable(let reason): return "server unreachable: \(reason)"
        case .unauthorized(let reason): return "unauthorized: \(reason)"
        case .transient(let reason, let after): return "transient: \(reason)" + (after.map { " (retry after \($0))" } ?? "")
        case .permanent(let reason): return "permanent: \(reason)"
        case .tooLarge(let reason): return "too large: \(reason)"
        case .cursorExpired(let kinds): return "cursor expired for \(kinds.sorted().joined(separator: ", "))"
        case .serverMismatch(let mismatch): return "server mismatch: \(mismatch)"
        case .spaceRefused(let refusal): return "refused: \(refusal)"
        case .attachmentRefused(let refusal): return "refused: \(refusal)"
        }
    }
}

import SyncJournalProtocol

/// A reply ``HTTPTransport`` reads on: a 200, or a status its caller takes
/// as an answer rather than a failure (404 or 405 to a wait for changes: an
/// older server).
///
/// ```swift
/// let reply = HTTPReply(status: 200, body: Array(#"{"changed":true}"#.utf8))
/// ```
struct HTTPReply: Sendable, Hashable {
    /// The status code.
    var status: Int
    /// The body.
    var body: [UInt8]
    /// The identity in its `Sync-Server-Identity` header (`nil`: none, a
    /// server from before identities, or not an identity).
    var server: ServerIdentity? = nil
    /// The headers the request asked to keep (``HeaderExchange/kept``), by
    /// the name asked for; one the reply lacks is absent.
    var headers: [String: String] = [:]
}

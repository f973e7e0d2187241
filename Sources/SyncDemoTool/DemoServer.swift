import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync

/// The server side of `sync-demo`: the in-memory reference server, or a
/// running `sync-server` reached over HTTP. The demo asks it only what a
/// client of that server can learn, so every check is a check of the
/// server's own answers.
protocol DemoServer: Sendable {
    /// How the demo's first line names the server and the user.
    var headline: String { get }
    /// The kinds the demo uses for pins and notes (unique per run on a shared server).
    var kinds: (pin: String, note: String) { get }
    /// A fresh transport for one device of the demo's user.
    func transport(device: String) -> any SyncTransport
    /// The user's live rows of `kind`, by id, as the server holds them now.
    func liveRows(kind: String) async throws(TransportError) -> [ServerRow]
    /// One live row, or `nil`.
    func liveRow(kind: String, id: String) async throws(TransportError) -> ServerRow?
    /// Another writer of the same user (a chat) creates a row on the server.
    func writeAsAnotherWriter(kind: String, id: String, fields: [String: FieldValue]) async throws(TransportError)
    /// The server's count of applied mutations, where the server exposes it (the reference server does; HTTP does not).
    func appliedMutations() async -> Int?
}

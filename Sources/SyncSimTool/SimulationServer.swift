import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync

/// The server a random simulation runs against: the in-memory reference
/// server (deterministic, with server-side fault knobs), or a running
/// `sync-server` over HTTP (real time, faults only on the client side).
/// The simulator learns the server's state only through these calls.
protocol SimulationServer: Sendable {
    /// How the report's first line names the server.
    var summary: String { get }
    /// Whether the run repeats byte for byte from its seed.
    var isDeterministic: Bool { get }
    /// Whether single records can be made to fail on the server (transient or permanent).
    var hasRecordFaults: Bool { get }
    /// A new transport of `user` for one device (beneath the device's fault layer).
    func transport(device: String, user: String) -> any SyncTransport
    /// The server's count of applied mutations, where it can be seen (`nil` over HTTP).
    func appliedMutations() async -> Int?
    /// Moves the server's clock on (the reference server's; a real one keeps its own time).
    func tick(_ milliseconds: Int64) async
    /// The live row of `kind`/`id`, or `nil`.
    func row(kind: String, id: String) async throws(TransportError) -> ServerRow?
    /// The live rows of `kind` that `user` sees: their personal space's, by
    /// id, then each shared space's they are a member of, by space and id.
    func rows(kind: String, user: String) async throws(TransportError) -> [ServerRow]
    /// The live row `key` as the shared list's owner, u1, sees it, or `nil`.
    func row(_ key: RecordKey) async throws(TransportError) -> ServerRow?
    /// The shared spaces `user` is a member of, with their role.
    func spaces(user: String) async throws(TransportError) -> [Space]
    /// Makes a space change as `user` (u1 creating the shared list, or
    /// changing a membership; a user leaving).
    func change(_ change: SpaceChange, user: String) async throws(TransportError)
    /// Another writer writes the row with `fields`; `true` when the server took it.
    func write(kind: String, id: String, fields: [String: FieldValue]) async throws(TransportError) -> Bool
    /// Another writer changes `changes` of a live row.
    func update(kind: String, id: String, changes: [String: FieldValue]) async throws(TransportError)
    /// Another writer deletes a live row; `true` when one was deleted.
    func delete(kind: String, id: String) async throws(TransportError) -> Bool
    /// Makes the server refuse or fail writes of one record (no-op where ``hasRecordFaults`` is false).
    func setRecordFault(kind: String, id: String, permanent: Bool, times: Int) async
    /// Lifts the record's faults.
    func clearRecordFaults(kind: String, id: String) async
    /// Whether the server holds `attachment`'s content whole and `user` may
    /// read it (uploaded it, or sees a live row that refers to it), as the
    /// status call answers that user.
    func holds(_ attachment: Attachment, user: String) async throws(TransportError) -> Bool
    /// Makes the server refuse contents over `maximumBytes` and collect
    /// what nothing refers to after `graceMilliseconds` of its clock (no-op
    /// where the server's own settings decide).
    func limitAttachments(maximumBytes: Int64, graceMilliseconds: Int64) async
    /// The contents the server holds whole, whoever uploaded them (the
    /// in-memory server only: none over HTTP, where nothing is restored).
    func storedContents() async -> Set<ContentHash>
    /// Whether the simulator may run the server's attachment collection (the in-memory server only).
    var collectsAttachments: Bool { get }
    /// Runs the server's attachment collection now; how many contents it deleted.
    func collectAttachments() async -> Int
    /// Whether the database can be backed up and restored (the in-memory server only).
    var canRestore: Bool { get }
    /// Copies the database (a backup), where ``canRestore``.
    func backUp() async
    /// Puts the database back to the last backup; `false` when none was taken.
    func restoreBackup() async -> Bool
}

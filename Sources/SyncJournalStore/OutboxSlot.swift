/// One place of the outbox's queue: the operation and its delivery marks,
/// 80 bytes. A failure history, when there is one, lies in the outbox's side table.
struct OutboxSlot: Sendable {
    /// The edit.
    var operation: JournalOperation
    /// Whether it may have reached the server.
    var sent: Bool
    /// Whether it waits for the app.
    var quarantined: Bool
    /// Whether the side table holds a failure history for it.
    var hasFailures: Bool
    /// Whether an earlier queued operation changes the same record (then
    /// that one, not this, decides whether the record is ready to send).
    var follows = false
}

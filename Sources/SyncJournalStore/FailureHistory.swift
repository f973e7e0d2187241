/// What an outbox entry's failed attempts left behind. Kept beside the queue,
/// not in each entry: most queued operations never fail, and a queue of
/// 100,000 then carries no room for it.
struct FailureHistory: Sendable, Hashable {
    /// Failed attempts of any kind.
    var attempts: Int
    /// The last failure's message.
    var lastError: String?
    /// Permanent failures since the operation was queued or last released.
    var permanentFailures: Int
    /// The last failure's kind.
    var lastFailure: FailureKind?

    /// The history of `entry`, or `nil` when it has never failed.
    init?(of entry: OutboxOperation) {
        guard entry.attempts != 0 || entry.lastError != nil || entry.permanentFailures != 0 || entry.lastFailure != nil else { return nil }
        attempts = entry.attempts
        lastError = entry.lastError
        permanentFailures = entry.permanentFailures
        lastFailure = entry.lastFailure
    }
}

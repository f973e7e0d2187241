import SyncJournalProtocol
/// One queued operation as the app (or `journal-dump --state`) lists it.
///
/// ```swift
/// for entry in try await engine.outboxStatus() {
///     print(entry.operation.key, entry.state, entry.attempts, entry.nextAttemptAt ?? "-", entry.lastError ?? "")
/// }
/// ```
public struct OutboxEntryStatus: Sendable, Hashable {
    /// Where an operation is in its delivery.
    public enum State: String, Sendable, Hashable {
        /// Waiting to be sent; never handed to a transport.
        case queued
        /// Handed to a transport, awaiting the reply (memory only).
        case inFlight = "in-flight"
        /// Handed to a transport before; it may have reached the server, so it
        /// is resent (with the same id) rather than cancelled.
        case sent
        /// Waiting for the app to retry or discard it.
        case quarantined
    }

    /// The operation.
    public var operation: JournalOperation
    /// Where it is.
    public var state: State
    /// Failed attempts of any kind.
    public var attempts: Int
    /// Permanent failures counted toward quarantine.
    public var permanentFailures: Int
    /// The last failure's message.
    public var lastError: String?
    /// The last failure's kind.
    public var lastFailure: FailureKind?
    /// When the engine will try it next (engine clock milliseconds); `nil`
    /// when not known here (the journal alone does not say), quarantined, or in flight.
    public var nextAttemptAt: Int64?

    /// The listing of one outbox entry.
    package init(_ entry: OutboxOperation, inFlight: Bool, nextAttemptAt: Int64? = nil) {
        operation = entry.operation
        state = entry.quarantined ? .quarantined : inFlight ? .inFlight : entry.sent ? .sent : .queued
        attempts = entry.attempts
        permanentFailures = entry.permanentFailures
        lastError = entry.lastError
        lastFailure = entry.lastFailure
        self.nextAttemptAt = state == .quarantined || state == .inFlight ? nil : nextAttemptAt
    }
}

import SyncJournalProtocol
/// One queued operation as the app (or `journal-dump --state`) lists it.
///
/// ```swift
/// for entry in try await engine.outboxStatus() {
///     print(entry.operation.key, entry.state, entry.attempts, entry.nextAttemptIn.map { "\($0)" } ?? "-", entry.lastError ?? "")
/// }
/// ```
public struct OutboxEntryStatus: Sendable, Hashable {
    /// Where an operation is in its delivery.
    public enum State: Sendable, Hashable, CustomStringConvertible {
        /// Waiting to be sent; never handed to a transport.
        case queued
        /// Handed to a transport, awaiting the reply (memory only).
        case inFlight
        /// Handed to a transport before; it may have reached the server, so it
        /// is resent (with the same id) rather than cancelled.
        case sent
        /// Waiting for the app to retry or discard it.
        case quarantined

        /// `queued`, `in-flight`, `sent` or `quarantined`.
        public var description: String {
            switch self {
            case .queued: return "queued"
            case .inFlight: return "in-flight"
            case .sent: return "sent"
            case .quarantined: return "quarantined"
            }
        }
    }

    /// The operation.
    public var operation: JournalOperation
    /// Where it is.
    public var state: State
    /// Whether it may have reached the server: a sent mark is journaled
    /// before an operation is first handed to a transport, and a reply can be
    /// lost after the server applied it. A sent operation is never cancelled
    /// locally (a delete of its record queues a server delete instead).
    public var sent: Bool
    /// Failed attempts of any kind.
    public var attempts: Int
    /// Permanent failures counted toward quarantine.
    public var permanentFailures: Int
    /// The last failure's message.
    public var lastError: String?
    /// The last failure's kind.
    public var lastFailure: FailureKind?
    /// How long from when the list was made until the engine tries it next
    /// (`.zero`: it is due); `nil` when not known here (the journal alone does
    /// not say), quarantined, or in flight. A wait measured on the engine's
    /// monotonic clock, not a date: changing the device's date does not move it.
    public var nextAttemptIn: Duration?

    /// The listing of one outbox entry.
    package init(_ entry: OutboxOperation, inFlight: Bool, nextAttemptIn: Duration? = nil) {
        operation = entry.operation
        sent = entry.sent
        state = entry.quarantined ? .quarantined : inFlight ? .inFlight : entry.sent ? .sent : .queued
        attempts = entry.attempts
        permanentFailures = entry.permanentFailures
        lastError = entry.lastError
        lastFailure = entry.lastFailure
        self.nextAttemptIn = state == .quarantined || state == .inFlight ? nil : nextAttemptIn
    }

    /// The operation's id (to await its outcome, retry or discard it).
    public var id: OperationID { operation.id }
    /// The record it changes.
    public var key: RecordKey { operation.key }
}

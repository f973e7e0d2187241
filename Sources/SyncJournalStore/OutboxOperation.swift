import SyncJournalProtocol

/// A queued local edit and what is known of its delivery.
package struct OutboxOperation: Sendable, Hashable {
    /// The edit.
    package var operation: JournalOperation
    /// Whether it may have reached the server (recorded durably before it was
    /// first handed to a transport). A sent operation is never cancelled
    /// locally: a reply may be lost while the server applied it.
    package var sent: Bool
    /// Failed attempts so far, of any kind.
    package var attempts: Int
    /// The last failure, for the app to show.
    package var lastError: String?
    /// Permanent failures since the operation was queued or last released
    /// from quarantine; transient ones never count.
    package var permanentFailures: Int
    /// The kind of the last failure.
    package var lastFailure: FailureKind?
    /// Whether the operation is quarantined: it is not sent, it is left out
    /// of the view, and later operations on the same record wait behind it
    /// until the app retries or discards it.
    package var quarantined: Bool

    /// Creates an outbox entry.
    package init(operation: JournalOperation, sent: Bool = false, attempts: Int = 0, lastError: String? = nil,
                permanentFailures: Int = 0, lastFailure: FailureKind? = nil, quarantined: Bool = false) {
        self.operation = operation
        self.sent = sent
        self.attempts = attempts
        self.lastError = lastError
        self.permanentFailures = permanentFailures
        self.lastFailure = lastFailure
        self.quarantined = quarantined
    }

    /// The operation's id.
    package var id: OperationID { operation.id }
    /// The record it changes.
    package var key: RecordKey { operation.key }
}

/// A queued local edit and what is known of its delivery.
public struct OutboxOperation: Sendable, Hashable {
    /// The edit.
    public var operation: JournalOperation
    /// Whether it may have reached the server (recorded durably before it was
    /// first handed to a transport). A sent operation is never cancelled
    /// locally: a reply may be lost while the server applied it.
    public var sent: Bool
    /// Failed attempts so far.
    public var attempts: Int
    /// The last failure, for the app to show.
    public var lastError: String?

    /// Creates an outbox entry.
    public init(operation: JournalOperation, sent: Bool = false, attempts: Int = 0, lastError: String? = nil) {
        self.operation = operation
        self.sent = sent
        self.attempts = attempts
        self.lastError = lastError
    }

    /// The operation's id.
    public var id: OperationID { operation.id }
    /// The record it changes.
    public var key: RecordKey { operation.key }
}

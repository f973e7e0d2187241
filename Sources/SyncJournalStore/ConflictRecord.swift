/// A local edit the server refused because its copy had changed since the
/// edit's base. Surfaced to the app, never silent.
public struct ConflictRecord: Sendable, Hashable {
    /// The local edit.
    public var operation: JournalOperation
    /// The server's copy when the conflict was found; `nil` if the server deleted the record.
    public var server: ServerRow?

    /// Creates a conflict value.
    public init(operation: JournalOperation, server: ServerRow?) {
        self.operation = operation
        self.server = server
    }

    /// The base the device had: the operation's `baseUpdatedAt`.
    public var base: Int64? { operation.baseUpdatedAt }
}

/// A local edit the server refused for good (another user's record, an invalid
/// value): it left the outbox and waits here for the app.
public struct RejectionRecord: Sendable, Hashable {
    /// The refused edit.
    public var operation: JournalOperation
    /// The server's reason.
    public var reason: String
    /// Failed attempts before it was given up.
    public var attempts: Int

    /// Creates a rejection value.
    public init(operation: JournalOperation, reason: String, attempts: Int) {
        self.operation = operation
        self.reason = reason
        self.attempts = attempts
    }
}

import SyncJournalProtocol

/// One edit the store has made durable: the record it touched and the queued operation that carries it to the server.
///
/// `create`, `update`, `delete` and each edit of a `write` transaction return one. Pass ``operation`` to
/// `LocalStore.outcome(of:)` to learn what the server did with it.
public struct Edit: Sendable, Hashable {
    /// The record's kind, for example `"note"`.
    public let kind: String
    /// The record's id; for a create, the id the store chose when the caller gave none.
    public let id: String
    /// The space of the edited record.
    public let space: SpaceID
    /// The queued operation that carries this edit to the server.
    public let operation: OperationID

    /// Makes a handle. The store makes these; apps only read them.
    package init(kind: String, id: String, space: SpaceID = .personal, operation: OperationID) {
        self.kind = kind
        self.id = id
        self.space = space
        self.operation = operation
    }
}

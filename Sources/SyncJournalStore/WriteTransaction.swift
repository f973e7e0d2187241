import SyncJournalProtocol

/// The edits of one ``LocalStore/write(isolation:_:)`` call, staged in order
/// and journaled together.
///
/// A transaction only records what the body asks for; the store checks the
/// edits when it journals them, each against the records as the edits
/// before it leave them. So an update of a record created earlier in the
/// same transaction works, and an update of a record nobody can see fails
/// the whole write. The handle exists only inside the body: it cannot be
/// copied out of it.
public struct WriteTransaction: ~Copyable, Sendable {
    /// The staged operations, in order; their bases are filled in when the store journals them.
    package private(set) var operations: [JournalOperation] = []
    private let makeRecordID: @Sendable () -> String
    private let queuedAt: Int64

    /// An empty transaction whose creates take ids from `makeRecordID` and whose edits are stamped `queuedAt`.
    package init(makeRecordID: @escaping @Sendable () -> String, queuedAt: Int64) {
        self.makeRecordID = makeRecordID
        self.queuedAt = queuedAt
    }

    /// Stages the creation of a record and returns its edit (with the id the
    /// store chose when `id` is nil).
    ///
    /// - Throws: validation errors (an empty kind, a bad id or field name, a
    ///   record too large) at once; whether the record already exists is
    ///   checked when the transaction is journaled.
    @discardableResult
    public mutating func create(_ kind: String, id: String? = nil, fields: [String: FieldValue]) throws(StoreError) -> Edit {
        try stage(.create, kind: kind, id: id ?? makeRecordID(), fields: fields)
    }

    /// Stages a change of some fields of a record that exists by then
    /// (before the transaction or created earlier in it), and returns its edit.
    @discardableResult
    public mutating func update(_ kind: String, id: String, changes: [String: FieldValue]) throws(StoreError) -> Edit {
        try stage(.update, kind: kind, id: id, fields: changes)
    }

    /// Stages the deletion of a record that exists by then, and returns its edit.
    @discardableResult
    public mutating func delete(_ kind: String, id: String) throws(StoreError) -> Edit {
        try stage(.delete, kind: kind, id: id, fields: [:])
    }

    private mutating func stage(_ op: OperationKind, kind: String, id: String, fields: [String: FieldValue]) throws(StoreError) -> Edit {
        try LocalStore.validate(kind: kind, id: id, fields: fields)
        let operation = JournalOperation(id: .random(), kind: op, entity: kind, recordID: id, fields: fields,
                                         baseUpdatedAt: nil, queuedAt: queuedAt)
        operations.append(operation)
        return Edit(kind: kind, id: id, operation: operation.id)
    }
}

import SyncJournalProtocol

/// The edits of one ``LocalStore/write(isolation:_:)`` call, staged in order
/// and journaled together, and the records as they stand for the body.
///
/// The body can read: ``fetch(_:id:in:)`` and ``record(_:id:in:)`` see the records as
/// the store held them when the body started, with the edits staged so far
/// applied, so a typed ``update(_:id:in:_:)`` reads, changes and queues only the
/// changed fields in one step.
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
    /// The store's records when the body started; staged edits are applied over them as they are read.
    private let state: StoreState

    /// An empty transaction whose creates take ids from `makeRecordID`, whose edits are
    /// stamped `queuedAt`, and whose reads start from `state`.
    package init(makeRecordID: @escaping @Sendable () -> String, queuedAt: Int64, state: StoreState = StoreState()) {
        self.makeRecordID = makeRecordID
        self.queuedAt = queuedAt
        self.state = state
    }

    /// Stages the creation of a record in `space` (the personal space unless
    /// named) and returns its edit (with the id the store chose when `id` is nil).
    ///
    /// - Throws: validation errors (an empty kind, a bad id or field name, a
    ///   record too large) at once; whether the record already exists, and
    ///   whether the user may write to `space`, are checked when the
    ///   transaction is journaled.
    @discardableResult
    public mutating func create(_ kind: String, id: String? = nil, fields: [String: FieldValue],
                                in space: SpaceID = .personal) throws(StoreError) -> Edit {
        try stage(.create, kind: kind, id: id ?? makeRecordID(), fields: fields, space: space)
    }

    /// Stages a change of some fields of a record of `space` that exists by then
    /// (before the transaction or created earlier in it), and returns its edit.
    @discardableResult
    public mutating func update(_ kind: String, id: String, changes: [String: FieldValue],
                                in space: SpaceID = .personal) throws(StoreError) -> Edit {
        try stage(.update, kind: kind, id: id, fields: changes, space: space)
    }

    /// Stages the deletion of a record of `space` that exists by then, and returns its edit.
    @discardableResult
    public mutating func delete(_ kind: String, id: String, in space: SpaceID = .personal) throws(StoreError) -> Edit {
        try stage(.delete, kind: kind, id: id, fields: [:], space: space)
    }

    /// The record of `kind` with `id` in `space` as the body sees it: the store's record
    /// with the edits staged so far applied; nil when there is none or it is deleted.
    public func record(_ kind: String, id: String, in space: SpaceID = .personal) -> StoreRecord? {
        let key = RecordKey(kind: kind, id: id, space: space)
        guard let fields = visibleFields(of: key) else { return nil }
        var record = state.storeRecord(key, fields: fields)
        record.hasPendingChanges = record.hasPendingChanges || operations.contains { $0.key == key }
        return record
    }

    /// The fields of `key` as the body sees them.
    private func visibleFields(of key: RecordKey) -> [String: FieldValue]? {
        var fields = state.visibleFields(of: key)
        for operation in operations where operation.key == key { operation.apply(to: &fields) }
        return fields
    }

    private mutating func stage(_ op: OperationKind, kind: String, id: String, fields: [String: FieldValue],
                                modelVersion: Int? = nil, space: SpaceID) throws(StoreError) -> Edit {
        try LocalStore.validate(kind: kind, id: id, fields: fields)
        try LocalStore.validate(modelVersion: modelVersion, key: RecordKey(kind: kind, id: id, space: space))
        let operation = JournalOperation(id: .random(), kind: op, entity: kind, recordID: id, fields: fields,
                                         baseUpdatedAt: nil, queuedAt: queuedAt, modelVersion: modelVersion, space: space)
        operations.append(operation)
        return Edit(kind: kind, id: id, space: space, operation: operation.id)
    }
}

// MARK: - Typed records

extension WriteTransaction {
    /// Stages the creation of the record for `value` in `space` (the personal
    /// space unless named), as ``LocalStore/insert(_:in:)`` makes it.
    ///
    /// ```swift
    /// struct Book: SyncRecord { static let kind = "book"; var id: String; var title: String; var shelf: String }
    /// let store = try await LocalStore.open(path: "books.journal")
    /// try await store.write { tx in
    ///     try tx.insert(Book(id: "b1", title: "Dune", shelf: "to read"))
    ///     try tx.update(Book.self, id: "b1") { $0.shelf = "reading" }
    ///     print(try tx.fetch(Book.self, id: "b1")?.shelf ?? "none")   // reading
    /// }
    /// ```
    ///
    /// - Throws: ``SyncRecordError/encodingFailed(kind:id:path:reason:)``,
    ///   ``SyncRecordError/invalidMigrations(kind:reason:)``, or ``SyncRecordError/store(_:)``
    ///   with ``StoreError/recordAlreadyExists(_:)`` when the body can see a record with that id.
    @discardableResult
    public mutating func insert<Record: SyncRecord>(_ value: Record, in space: SpaceID = .personal) throws(SyncRecordError) -> Edit {
        let id = value.id.recordIDString
        let schema = try LocalStore.schema(of: Record.self)
        let fields = schema.stored(try LocalStore.storedFields(of: value, id: id))
        let key = RecordKey(kind: Record.kind, id: id, space: space)
        if visibleFields(of: key) != nil { throw .store(.recordAlreadyExists(key)) }
        do {
            return try stage(.create, kind: Record.kind, id: id, fields: fields, modelVersion: LocalStore.writtenVersion(Record.self),
                             space: space)
        } catch {
            throw .store(error)
        }
    }

    /// The record of `type` with `id` in `space` as the body sees it, upgraded to
    /// the model's current shape; nil when there is none.
    ///
    /// - Throws: ``SyncRecordError/undecodable(_:)`` when it does not decode.
    public func fetch<Record: SyncRecord>(_ type: Record.Type, id: Record.ID,
                                          in space: SpaceID = .personal) throws(SyncRecordError) -> Record? {
        guard let stored = record(Record.kind, id: id.recordIDString, in: space) else { return nil }
        switch LocalStore.decode(type, from: stored) {
        case .success(let value): return value
        case .failure(let report): throw .undecodable(report)
        }
    }

    /// Reads the record, lets `mutate` change it, and stages an update of only the
    /// fields whose encoded value changed. Returns nil, and stages nothing, when none did.
    ///
    /// - Throws: ``SyncRecordError/notFound(kind:id:)``, ``SyncRecordError/undecodable(_:)``,
    ///   ``SyncRecordError/idChanged(kind:from:to:)``, or what `mutate` throws.
    @discardableResult
    public mutating func update<Record: SyncRecord>(_ type: Record.Type, id: Record.ID, in space: SpaceID = .personal,
                                                    _ mutate: (inout Record) throws -> Void) throws -> Edit? {
        guard let original = try fetch(type, id: id, in: space) else {
            throw SyncRecordError.notFound(kind: Record.kind, id: id.recordIDString)
        }
        var changed = original
        try mutate(&changed)
        return try save(changed, original: original, in: space)
    }

    /// Stages an update of the fields of `value` that differ from `original`, the copy
    /// the body read. Returns nil, and stages nothing, when no field differs.
    ///
    /// - Throws: ``SyncRecordError/idChanged(kind:from:to:)``, ``SyncRecordError/notFound(kind:id:)``
    ///   when the record is no longer visible, ``SyncRecordError/encodingFailed(kind:id:path:reason:)``.
    @discardableResult
    public mutating func save<Record: SyncRecord>(_ value: Record, original: Record,
                                                  in space: SpaceID = .personal) throws(SyncRecordError) -> Edit? {
        let id = original.id.recordIDString
        guard let stored = visibleFields(of: RecordKey(kind: Record.kind, id: id, space: space)) else {
            throw .notFound(kind: Record.kind, id: id)
        }
        guard let changes = try LocalStore.changes(from: original, to: value, stored: stored) else { return nil }
        do {
            return try stage(.update, kind: Record.kind, id: id, fields: changes, modelVersion: LocalStore.writtenVersion(Record.self),
                             space: space)
        } catch {
            throw .store(error)
        }
    }

    /// Stages the deletion of the record of `type` with `id`.
    ///
    /// - Throws: ``SyncRecordError/notFound(kind:id:)`` when the body cannot see it.
    @discardableResult
    public mutating func delete<Record: SyncRecord>(_ type: Record.Type, id: Record.ID,
                                                    in space: SpaceID = .personal) throws(SyncRecordError) -> Edit {
        let recordID = id.recordIDString
        guard visibleFields(of: RecordKey(kind: Record.kind, id: recordID, space: space)) != nil else {
            throw .notFound(kind: Record.kind, id: recordID)
        }
        do {
            return try stage(.delete, kind: Record.kind, id: recordID, fields: [:], modelVersion: LocalStore.writtenVersion(Record.self),
                             space: space)
        } catch {
            throw .store(error)
        }
    }
}

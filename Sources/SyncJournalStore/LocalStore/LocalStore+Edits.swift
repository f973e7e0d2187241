import SyncJournalProtocol
import SyncJournalCore

extension LocalStore {
    /// Creates a record and returns the edit: its id (a new random one when
    /// `id` is nil) and the queued operation.
    ///
    /// - Throws: ``StoreError/recordAlreadyExists(_:)`` when the app can see
    ///   a record with that id; validation errors; ``StoreError/journal(_:)``.
    @discardableResult
    public func create(_ kind: String, id: String? = nil, fields: [String: FieldValue]) async throws(StoreError) -> Edit {
        let recordID = id ?? options.makeRecordID()
        try Self.validate(kind: kind, id: recordID, fields: fields)
        let now = options.clock.nowMilliseconds()
        let operationID = OperationID.random()
        try await submit { (staged) throws(StoreError) in
            let key = RecordKey(kind: kind, id: recordID)
            if staged.visibleFields(of: key) != nil { throw .recordAlreadyExists(key) }
            // A record created here has no base until the server confirms it.
            let operation = JournalOperation(id: operationID, kind: .create, entity: kind, recordID: recordID,
                                             fields: fields, baseUpdatedAt: nil, queuedAt: now)
            return [Self.edit(operation, in: staged)]
        }
        await notifyEditObserver()
        return Edit(kind: kind, id: recordID, operation: operationID)
    }

    /// Changes some fields of a visible record and returns the edit (its
    /// ``Edit/operation`` to await with ``outcome(of:timeout:clock:)``).
    @discardableResult
    public func update(_ kind: String, id: String, changes: [String: FieldValue]) async throws(StoreError) -> Edit {
        try Self.validate(kind: kind, id: id, fields: changes)
        let now = options.clock.nowMilliseconds()
        let operationID = OperationID.random()
        try await submit { (staged) throws(StoreError) in
            let key = RecordKey(kind: kind, id: id)
            guard let current = staged.visibleFields(of: key) else { throw .recordNotFound(key) }
            try Self.checkMergedFieldCount(current, changes, key: key)
            let operation = JournalOperation(id: operationID, kind: .update, entity: kind, recordID: id, fields: changes,
                                             baseUpdatedAt: staged.base(for: key), queuedAt: now)
            return [Self.edit(operation, in: staged)]
        }
        await notifyEditObserver()
        return Edit(kind: kind, id: id, operation: operationID)
    }

    /// Deletes a visible record and returns the edit. Only a record the app
    /// can see can be deleted.
    @discardableResult
    public func delete(_ kind: String, id: String) async throws(StoreError) -> Edit {
        try Self.validate(kind: kind, id: id, fields: [:])
        let now = options.clock.nowMilliseconds()
        let operationID = OperationID.random()
        try await submit { (staged) throws(StoreError) in
            let key = RecordKey(kind: kind, id: id)
            guard staged.visibleFields(of: key) != nil else { throw .recordNotFound(key) }
            let operation = JournalOperation(id: operationID, kind: .delete, entity: kind, recordID: id,
                                             baseUpdatedAt: staged.base(for: key), queuedAt: now)
            return [Self.edit(operation, in: staged)]
        }
        await notifyEditObserver()
        return Edit(kind: kind, id: id, operation: operationID)
    }

    /// The edit event for `operation`, with the compaction it causes.
    static func edit(_ operation: JournalOperation, in staged: StoreState) -> StoreEvent {
        let steps = Compactor.steps(for: operation, after: staged.outbox.operations(on: operation.key))
        // Compaction only saves work; when a merge would not fit in one
        // record, both edits stay queued as they are. (Without steps the edit
        // was already checked against the limit by `validate`.)
        let compacted = StoreEvent.edit(operation, compaction: steps)
        if !steps.isEmpty, compacted.encodedPayload().count > JournalFormat.maximumPayloadLength { return .edit(operation, compaction: []) }
        return compacted
    }

    static func validate(kind: String, id: String, fields: [String: FieldValue]) throws(StoreError) {
        if kind.isEmpty { throw .emptyKind }
        // The protocol's limits, checked here so an edit no server would
        // accept is refused at once instead of queued and rejected later.
        if let problem = ProtocolLimits.problem(kind: kind) { throw .invalidKind(kind, reason: problem) }
        if id.isEmpty { throw .invalidRecordID(id, reason: "empty") }
        if id.utf8.count > JournalOperation.maximumRecordIDLength {
            throw .invalidRecordID(id, reason: "\(id.utf8.count) UTF-8 bytes, at most \(JournalOperation.maximumRecordIDLength)")
        }
        if let problem = ProtocolLimits.problem(recordID: id) { throw .invalidRecordID(id, reason: problem) }
        if let problem = FieldValue.problem(in: fields) { throw .invalidFields(kind: kind, id: id, reason: problem) }
        if let problem = ProtocolLimits.problem(fieldCount: fields.count, names: fields.keys) {
            throw .invalidFields(kind: kind, id: id, reason: problem)
        }
        let size = JournalOperation(id: OperationID(bytes: Array(repeating: 0, count: 16))!, kind: .create, entity: kind,
                                    recordID: id, fields: fields, queuedAt: 0).encoded().count
        if size > JournalFormat.maximumPayloadLength / 2 {
            throw .invalidFields(kind: kind, id: id, reason: "\(size) bytes, more than a record may hold")
        }
    }

    /// Refuses an update that would leave the record with more fields than
    /// the protocol lets a record hold: the server would reject it for good,
    /// long after the app was told it worked.
    static func checkMergedFieldCount(_ current: [String: FieldValue], _ changes: [String: FieldValue], key: RecordKey) throws(StoreError) {
        let merged = current.count + changes.keys.filter { current[$0] == nil }.count
        if merged > ProtocolLimits.maximumFieldsPerRecord {
            throw .invalidFields(kind: key.kind, id: key.id,
                                 reason: "the record would have \(merged) fields, at most \(ProtocolLimits.maximumFieldsPerRecord)")
        }
    }
}

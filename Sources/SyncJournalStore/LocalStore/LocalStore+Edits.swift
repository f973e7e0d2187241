import SyncJournalProtocol
import SyncJournalCore

extension LocalStore {
    /// Creates a record in `space` (the personal space unless named) and
    /// returns the edit: its id (a new random one when `id` is nil) and the
    /// queued operation.
    ///
    /// ```swift
    /// try await store.create("pin", fields: ["title": "Tapas"], in: weekendPins.id)
    /// ```
    ///
    /// - Throws: ``StoreError/recordAlreadyExists(_:)`` when the app can see
    ///   a record with that id in that space; ``StoreError/noSuchSpace(_:)``
    ///   or ``StoreError/readOnlySpace(_:)`` for a shared space the user may
    ///   not write to; validation errors; ``StoreError/journal(_:)``.
    @discardableResult
    public nonisolated func create(_ kind: String, id: String? = nil, fields: [String: FieldValue],
                       in space: SpaceID = .personal) async throws(StoreError) -> Edit {
        try await create(kind, id: id, fields: fields, modelVersion: nil, in: space)
    }

    /// ``create(_:id:fields:in:)`` by an app whose model version is
    /// `modelVersion` (`nil`: not stated), journaled and pushed with the edit.
    ///
    /// - Throws: ``StoreError/invalidModelVersion(_:version:)`` for a version
    ///   outside 1 to `ProtocolLimits.maximumModelVersion`, and whatever
    ///   ``create(_:id:fields:in:)`` throws.
    @discardableResult
    package nonisolated func create(_ kind: String, id: String? = nil, fields: [String: FieldValue],
                        modelVersion: Int?, in space: SpaceID = .personal) async throws(StoreError) -> Edit {
        let recordID = id ?? makeRecordID()
        try Self.validate(kind: kind, id: recordID, fields: fields)
        try Self.validate(modelVersion: modelVersion, key: RecordKey(kind: kind, id: recordID, space: space))
        let now = editClock.wallTimeMilliseconds
        let operationID = OperationID.random()
        try await submitEdit { (staged) throws(StoreError) in
            let key = RecordKey(kind: kind, id: recordID, space: space)
            try Self.checkWritable(space, in: staged)
            if staged.visibleFields(of: key) != nil { throw .recordAlreadyExists(key) }
            // A record created here has no base until the server confirms it.
            let operation = JournalOperation(id: operationID, kind: .create, entity: kind, recordID: recordID,
                                             fields: fields, baseUpdatedAt: nil, queuedAt: now, modelVersion: modelVersion,
                                             space: space)
            return [Self.edit(operation, in: staged)]
        }
        return Edit(kind: kind, id: recordID, space: space, operation: operationID)
    }

    /// Changes some fields of a visible record and returns the edit (its
    /// ``Edit/operation`` to await with ``outcome(of:timeout:clock:)``).
    ///
    /// A record of a shared space is named with its `space`:
    ///
    /// ```swift
    /// try await store.update("pin", id: pin.id, changes: ["title": "Tapas bar"], in: pin.space)
    /// ```
    @discardableResult
    public nonisolated func update(_ kind: String, id: String, changes: [String: FieldValue],
                       in space: SpaceID = .personal) async throws(StoreError) -> Edit {
        try await update(kind, id: id, changes: changes, modelVersion: nil, in: space)
    }

    /// ``update(_:id:changes:in:)`` by an app whose model version is
    /// `modelVersion` (`nil`: not stated), journaled and pushed with the edit.
    ///
    /// - Throws: ``StoreError/invalidModelVersion(_:version:)`` for a version
    ///   out of range, and whatever ``update(_:id:changes:in:)`` throws.
    @discardableResult
    package nonisolated func update(_ kind: String, id: String, changes: [String: FieldValue],
                        modelVersion: Int?, in space: SpaceID = .personal) async throws(StoreError) -> Edit {
        try Self.validate(kind: kind, id: id, fields: changes)
        try Self.validate(modelVersion: modelVersion, key: RecordKey(kind: kind, id: id, space: space))
        let now = editClock.wallTimeMilliseconds
        let operationID = OperationID.random()
        try await submitEdit { (staged) throws(StoreError) in
            let key = RecordKey(kind: kind, id: id, space: space)
            try Self.checkWritable(space, in: staged)
            guard let current = staged.visibleFields(of: key) else { throw .recordNotFound(key) }
            try Self.checkMergedFieldCount(current, changes, key: key)
            let operation = JournalOperation(id: operationID, kind: .update, entity: kind, recordID: id, fields: changes,
                                             baseUpdatedAt: staged.base(for: key), queuedAt: now, modelVersion: modelVersion,
                                             space: space)
            return [Self.edit(operation, in: staged)]
        }
        return Edit(kind: kind, id: id, space: space, operation: operationID)
    }

    /// Deletes a visible record of `space` (the personal space unless named)
    /// and returns the edit. Only a record the app can see can be deleted.
    @discardableResult
    public nonisolated func delete(_ kind: String, id: String, in space: SpaceID = .personal) async throws(StoreError) -> Edit {
        try await delete(kind, id: id, modelVersion: nil, in: space)
    }

    /// ``delete(_:id:in:)`` by an app whose model version is `modelVersion`
    /// (`nil`: not stated); the server keeps the highest version on the
    /// record's tombstone.
    ///
    /// - Throws: ``StoreError/invalidModelVersion(_:version:)`` for a version
    ///   out of range, and whatever ``delete(_:id:in:)`` throws.
    @discardableResult
    package nonisolated func delete(_ kind: String, id: String, modelVersion: Int?, in space: SpaceID = .personal) async throws(StoreError) -> Edit {
        try Self.validate(kind: kind, id: id, fields: [:])
        try Self.validate(modelVersion: modelVersion, key: RecordKey(kind: kind, id: id, space: space))
        let now = editClock.wallTimeMilliseconds
        let operationID = OperationID.random()
        try await submitEdit { (staged) throws(StoreError) in
            let key = RecordKey(kind: kind, id: id, space: space)
            try Self.checkWritable(space, in: staged)
            guard staged.visibleFields(of: key) != nil else { throw .recordNotFound(key) }
            let operation = JournalOperation(id: operationID, kind: .delete, entity: kind, recordID: id,
                                             baseUpdatedAt: staged.base(for: key), queuedAt: now, modelVersion: modelVersion,
                                             space: space)
            return [Self.edit(operation, in: staged)]
        }
        return Edit(kind: kind, id: id, space: space, operation: operationID)
    }

    /// Refuses an edit into a shared space the device does not know the user
    /// may write to. Checked against the state the edit is applied to, so a
    /// membership lost a moment earlier is seen. (The server decides in the
    /// end: a role taken away while offline is refused when the edit is pushed.)
    static func checkWritable(_ space: SpaceID, in staged: StoreState) throws(StoreError) {
        guard !space.isPersonal else { return }
        guard let described = staged.spaces[space] else { throw .noSuchSpace(space) }
        if !described.role.canWrite { throw .readOnlySpace(space) }
    }

    /// The edit event for `operation`, with the compaction it causes.
    static func edit(_ operation: JournalOperation, in staged: StoreState) -> StoreEvent {
        let steps = Compactor.steps(for: operation, after: staged.outbox.operations(on: operation.key))
        // Compaction only saves work; when a merge would not fit in one
        // record, both edits stay queued as they are. (Without steps the edit
        // was already checked against the limit by `validate`.)
        if !steps.isEmpty, StoreEvent.editPayloadLength(operation, compaction: steps) > JournalFormat.maximumPayloadLength {
            return .edit(operation, compaction: [])
        }
        return .edit(operation, compaction: steps)
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
                                    recordID: id, fields: fields, queuedAt: 0).encodedLength
        if size > JournalFormat.maximumPayloadLength / 2 {
            throw .invalidFields(kind: kind, id: id, reason: "\(size) bytes, more than a record may hold")
        }
    }

    /// Refuses a model version the protocol cannot carry, before anything is journaled.
    package static func validate(modelVersion: Int?, key: RecordKey) throws(StoreError) {
        if let modelVersion, !ProtocolLimits.isValidModelVersion(modelVersion) {
            throw .invalidModelVersion(key, version: modelVersion)
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

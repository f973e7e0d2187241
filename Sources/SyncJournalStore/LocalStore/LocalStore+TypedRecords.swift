import SyncJournalProtocol

extension LocalStore {
    /// Creates the record for `value`: its properties become the fields, its `id` the record id.
    ///
    /// - Throws: ``SyncRecordError/encodingFailed(kind:id:path:reason:)`` when the value
    ///   does not encode; ``SyncRecordError/store(_:)`` with
    ///   ``StoreError/recordAlreadyExists(_:)`` when the app can see a record with that id,
    ///   or another refusal of the store.
    @discardableResult
    public func insert<Record: SyncRecord>(_ value: Record) async throws(SyncRecordError) -> Edit {
        let id = value.id.recordIDString
        let fields = try Self.storedFields(of: value, id: id)
        do {
            return try await create(Record.kind, id: id, fields: fields)
        } catch {
            throw Self.recordError(error)
        }
    }

    /// The visible record of `type` with `id`, or nil when there is none (or it is deleted).
    ///
    /// - Throws: ``SyncRecordError/undecodable(_:)`` when the stored fields do not decode as
    ///   `Record`, naming the field; ``SyncRecordError/store(_:)`` when the store cannot be read.
    public func fetch<Record: SyncRecord>(_ type: Record.Type, id: Record.ID) throws(SyncRecordError) -> Record? {
        let stored: StoreRecord?
        do { stored = try record(Record.kind, id: id.recordIDString) } catch { throw .store(error) }
        guard let stored else { return nil }
        switch Self.decode(type, from: stored) {
        case .success(let value): return value
        case .failure(let report): throw .undecodable(report)
        }
    }

    /// Every visible record of `type`, ordered by record id; a record that does not decode
    /// is listed in ``TypedRecords/undecodable`` with the field that failed, never dropped.
    ///
    /// - Throws: ``SyncRecordError/store(_:)`` when the store cannot be read.
    public func fetchAll<Record: SyncRecord>(_ type: Record.Type) throws(SyncRecordError) -> TypedRecords<Record> {
        let stored: [StoreRecord]
        do { stored = try records(Record.kind) } catch { throw .store(error) }
        return TypedRecords(decoding: stored)
    }

    /// Reads the record, lets `mutate` change it, and queues an update of only the fields
    /// whose encoded value changed. Returns nil, and queues nothing, when none did.
    ///
    /// - Throws: ``SyncRecordError/notFound(kind:id:)``; ``SyncRecordError/undecodable(_:)``
    ///   when the stored record does not decode; ``SyncRecordError/idChanged(kind:from:to:)``
    ///   when `mutate` changed the id; ``SyncRecordError/encodingFailed(kind:id:path:reason:)``;
    ///   ``SyncRecordError/store(_:)``.
    @discardableResult
    public func update<Record: SyncRecord>(_ type: Record.Type, id: Record.ID,
                                           _ mutate: (inout Record) -> Void) async throws(SyncRecordError) -> Edit? {
        guard let original = try fetch(type, id: id) else { throw .notFound(kind: Record.kind, id: id.recordIDString) }
        var changed = original
        mutate(&changed)
        return try await save(changed, original: original)
    }

    /// Queues an update of the fields of `value` that differ from `original`, the copy the app
    /// read; fields that another edit changed since then and `value` did not are left alone.
    /// Returns nil, and queues nothing, when no field differs.
    ///
    /// - Throws: ``SyncRecordError/idChanged(kind:from:to:)`` when the two ids differ;
    ///   ``SyncRecordError/notFound(kind:id:)`` when the record is no longer visible;
    ///   ``SyncRecordError/encodingFailed(kind:id:path:reason:)``; ``SyncRecordError/store(_:)``.
    @discardableResult
    public func save<Record: SyncRecord>(_ value: Record, original: Record) async throws(SyncRecordError) -> Edit? {
        let id = original.id.recordIDString
        if value.id != original.id {
            throw .idChanged(kind: Record.kind, from: id, to: value.id.recordIDString)
        }
        let before = try Self.storedFields(of: original, id: id)
        let after = try Self.storedFields(of: value, id: id)
        let changes = Self.changedFields(from: before, to: after)
        if changes.isEmpty { return nil }
        do {
            return try await update(Record.kind, id: id, changes: changes)
        } catch {
            throw Self.recordError(error)
        }
    }

    /// Deletes the visible record of `type` with `id`.
    ///
    /// - Throws: ``SyncRecordError/notFound(kind:id:)``; ``SyncRecordError/store(_:)``.
    @discardableResult
    public func delete<Record: SyncRecord>(_ type: Record.Type, id: Record.ID) async throws(SyncRecordError) -> Edit {
        let recordID = id.recordIDString
        do {
            return try await delete(Record.kind, id: recordID)
        } catch {
            throw Self.recordError(error)
        }
    }

    /// The fields a typed record is stored as: its encoding without the id.
    static func storedFields<Record: SyncRecord>(of value: Record, id: String) throws(SyncRecordError) -> [String: FieldValue] {
        do {
            var fields = try FieldValueEncoder().encode(value)
            fields["id"] = nil
            return fields
        } catch let error as EncodingError {
            let (path, reason): (String, String)
            switch error {
            case .invalidValue(_, let context): (path, reason) = (CodingPathText.text(context.codingPath), context.debugDescription)
            @unknown default: (path, reason) = ("", "\(error)")
            }
            throw .encodingFailed(kind: Record.kind, id: id, path: path, reason: reason)
        } catch {
            throw .encodingFailed(kind: Record.kind, id: id, path: "", reason: "\(error)")
        }
    }

    /// `stored` decoded as a `Record`, its id given back from the record id, or the report
    /// of where it fails.
    static func decode<Record: SyncRecord>(_ type: Record.Type, from stored: StoreRecord) -> Result<Record, UndecodableRecord> {
        let key = RecordKey(kind: stored.kind, id: stored.id)
        guard let id = Record.ID(recordIDString: stored.id) else {
            return .failure(UndecodableRecord(key: key, path: "id", reason: "\"\(stored.id)\" is not a \(Record.ID.self)"))
        }
        do {
            var fields = stored.fields
            fields["id"] = try FieldValueEncoder().encodeValue(id)
            return .success(try FieldValueDecoder().decode(type, from: fields))
        } catch let error as DecodingError {
            let context: DecodingError.Context?
            switch error {
            case .typeMismatch(_, let found), .valueNotFound(_, let found), .dataCorrupted(let found): context = found
            case .keyNotFound(let missing, let found):
                context = DecodingError.Context(codingPath: found.codingPath + [missing], debugDescription: found.debugDescription)
            @unknown default: context = nil
            }
            return .failure(UndecodableRecord(key: key, path: context.map { CodingPathText.text($0.codingPath) } ?? "",
                                              reason: context?.debugDescription ?? "\(error)"))
        } catch {
            return .failure(UndecodableRecord(key: key, path: "", reason: "\(error)"))
        }
    }

    /// The fields of `after` whose values differ from `before`; a field `after` no longer has is cleared (null).
    static func changedFields(from before: [String: FieldValue], to after: [String: FieldValue]) -> [String: FieldValue] {
        var changes = after.filter { before[$0.key] != $0.value }
        for name in before.keys where after[name] == nil && before[name] != .null { changes[name] = .null }
        return changes
    }

    /// A store refusal as a typed-record error (a record that is not there is ``SyncRecordError/notFound(kind:id:)``).
    static func recordError(_ error: any Error) -> SyncRecordError {
        switch error {
        case let typed as SyncRecordError: return typed
        case StoreError.recordNotFound(let key): return .notFound(kind: key.kind, id: key.id)
        case let store as StoreError: return .store(store)
        default: return .store(.invalidFields(kind: "", id: "", reason: "\(error)"))
        }
    }
}

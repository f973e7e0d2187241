import SyncJournalProtocol

extension LocalStore {
    /// Creates the record for `value` in `space` (the personal space unless
    /// named): its properties become the fields, its `id` the record id.
    ///
    /// - Throws: ``SyncRecordError/encodingFailed(kind:id:path:reason:)`` when the value
    ///   does not encode; ``SyncRecordError/store(_:)`` with
    ///   ``StoreError/recordAlreadyExists(_:)`` when the app can see a record with that id
    ///   in that space, ``StoreError/noSuchSpace(_:)`` or ``StoreError/readOnlySpace(_:)``
    ///   for a shared space the user may not write to, or another refusal of the store.
    @discardableResult
    public func insert<Record: SyncRecord>(_ value: Record, in space: SpaceID = .personal) async throws(SyncRecordError) -> Edit {
        let id = value.id.recordIDString
        let schema = try Self.schema(of: Record.self)
        let fields = schema.stored(try Self.storedFields(of: value, id: id))
        do {
            return try await create(Record.kind, id: id, fields: fields, modelVersion: Self.writtenVersion(Record.self), in: space)
        } catch {
            throw Self.recordError(error)
        }
    }

    /// The visible record of `type` with `id` in `space`, or nil when there is none
    /// (or it is deleted).
    ///
    /// - Throws: ``SyncRecordError/undecodable(_:)`` when the stored fields do not decode as
    ///   `Record`, naming the field; ``SyncRecordError/store(_:)`` when the store cannot be read.
    public func fetch<Record: SyncRecord>(_ type: Record.Type, id: Record.ID,
                                          in space: SpaceID = .personal) throws(SyncRecordError) -> Record? {
        let stored: StoreRecord?
        do { stored = try record(Record.kind, id: id.recordIDString, in: space) } catch { throw .store(error) }
        guard let stored else { return nil }
        switch Self.decode(type, from: stored) {
        case .success(let value): return value
        case .failure(let report): throw .undecodable(report)
        }
    }

    /// Every visible record of `type` in `space` (of every space when nil), ordered by
    /// record id; a record that does not decode is listed in ``TypedRecords/undecodable``
    /// with the field that failed, never dropped.
    ///
    /// - Throws: ``SyncRecordError/store(_:)`` when the store cannot be read.
    public func fetchAll<Record: SyncRecord>(_ type: Record.Type, in space: SpaceID? = nil) throws(SyncRecordError) -> TypedRecords<Record> {
        let stored: [StoreRecord]
        do { stored = try records(Record.kind, in: space) } catch { throw .store(error) }
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
    public func update<Record: SyncRecord>(_ type: Record.Type, id: Record.ID, in space: SpaceID = .personal,
                                           _ mutate: (inout Record) -> Void) async throws(SyncRecordError) -> Edit? {
        guard let original = try fetch(type, id: id, in: space) else { throw .notFound(kind: Record.kind, id: id.recordIDString) }
        var changed = original
        mutate(&changed)
        return try await save(changed, original: original, in: space)
    }

    /// Queues an update of the fields of `value` that differ from `original`, the copy the app
    /// read; fields that another edit changed since then and `value` did not are left alone.
    /// Returns nil, and queues nothing, when no field differs.
    ///
    /// - Throws: ``SyncRecordError/idChanged(kind:from:to:)`` when the two ids differ;
    ///   ``SyncRecordError/notFound(kind:id:)`` when the record is no longer visible;
    ///   ``SyncRecordError/encodingFailed(kind:id:path:reason:)``; ``SyncRecordError/store(_:)``.
    @discardableResult
    public func save<Record: SyncRecord>(_ value: Record, original: Record,
                                         in space: SpaceID = .personal) async throws(SyncRecordError) -> Edit? {
        let id = original.id.recordIDString
        if value.id != original.id {
            throw .idChanged(kind: Record.kind, from: id, to: value.id.recordIDString)
        }
        let stored: [String: FieldValue]
        do { stored = try record(Record.kind, id: id, in: space)?.fields ?? [:] } catch { throw .store(error) }
        guard let changes = try Self.changes(from: original, to: value, stored: stored) else { return nil }
        do {
            return try await update(Record.kind, id: id, changes: changes, modelVersion: Self.writtenVersion(Record.self), in: space)
        } catch {
            throw Self.recordError(error)
        }
    }

    /// Deletes the visible record of `type` with `id` in `space`.
    ///
    /// - Throws: ``SyncRecordError/notFound(kind:id:)``; ``SyncRecordError/store(_:)``.
    @discardableResult
    public func delete<Record: SyncRecord>(_ type: Record.Type, id: Record.ID,
                                           in space: SpaceID = .personal) async throws(SyncRecordError) -> Edit {
        let recordID = id.recordIDString
        do {
            return try await delete(Record.kind, id: recordID, modelVersion: Self.writtenVersion(Record.self), in: space)
        } catch {
            throw Self.recordError(error)
        }
    }

    /// The update that turns `original` into `value`, in stored names, or nil when no
    /// field changed. `stored` is the record's fields as stored: the parts of a changed
    /// field this version only read (an unknown enum value, a member it does not declare)
    /// keep their stored form, because the edit never meant them.
    static func changes<Record: SyncRecord>(from original: Record, to value: Record,
                                            stored: [String: FieldValue]) throws(SyncRecordError) -> [String: FieldValue]? {
        let id = original.id.recordIDString
        if value.id != original.id {
            throw .idChanged(kind: Record.kind, from: id, to: value.id.recordIDString)
        }
        let schema = try Self.schema(of: Record.self)
        let before = try Self.storedFields(of: original, id: id)
        let after = try Self.storedFields(of: value, id: id)
        let changed = Self.changedFields(from: before, to: after)
        if changed.isEmpty { return nil }
        var changes: [String: FieldValue] = [:]
        for (name, value) in changed {
            let storedName = schema.storedName(name)
            changes[storedName] = FieldValue.keepingUntouchedParts(stored: stored[storedName], before: before[name], after: value)
        }
        return changes
    }

    /// The model version an edit through `type` carries: nil for version 1, which is what
    /// a record no version names is read as, so an unversioned model journals as before.
    static func writtenVersion<Record: SyncRecord>(_ type: Record.Type) -> Int? {
        Record.schemaVersion > 1 ? Record.schemaVersion : nil
    }

    /// The schema of `type`, or the error of migrations that cannot be carried out.
    static func schema<Record: SyncRecord>(of type: Record.Type) throws(SyncRecordError) -> RecordSchema {
        let schema = RecordSchema(type)
        if let problem = schema.problem { throw .invalidMigrations(kind: Record.kind, reason: problem) }
        return schema
    }

    /// The fields of a typed record, named as its properties: its encoding without the id.
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
        decode(type, from: stored, schema: RecordSchema(type))
    }

    /// `stored` upgraded by `schema` and decoded as a `Record`.
    ///
    /// A record a newer version wrote may hold values this version's model cannot
    /// express (a rating that became 4.5 where this version has an integer). Such a
    /// field reads as its default, or as absent for an optional property, so the rest
    /// of the record still shows; the stored value is kept, because saving sends only
    /// the fields the app changed.
    static func decode<Record: SyncRecord>(_ type: Record.Type, from stored: StoreRecord,
                                           schema: RecordSchema) -> Result<Record, UndecodableRecord> {
        let key = RecordKey(kind: stored.kind, id: stored.id)
        if let problem = schema.problem { return .failure(UndecodableRecord(key: key, path: "", reason: problem)) }
        guard let id = Record.ID(recordIDString: stored.id) else {
            return .failure(UndecodableRecord(key: key, path: "id", reason: "\"\(stored.id)\" is not a \(Record.ID.self)"))
        }
        let encodedID: FieldValue
        do { encodedID = try FieldValueEncoder().encodeValue(id) } catch {
            return .failure(UndecodableRecord(key: key, path: "id", reason: "\(error)"))
        }
        let writtenAt = stored.modelVersion
        var fields = schema.upgrade(stored.fields, writtenAt: writtenAt)
        fields["id"] = encodedID
        let newer = (writtenAt ?? 1) > schema.version
        var setAside: Set<String> = []
        while true {
            let report: UndecodableRecord
            do {
                return .success(try FieldValueDecoder().decode(type, from: fields))
            } catch let error as DecodingError {
                report = Self.report(error, key: key)
            } catch {
                return .failure(UndecodableRecord(key: key, path: "", reason: "\(error)"))
            }
            // A field only a newer version can fill is set aside, once, and decoding tried again.
            let field = report.path.prefix { $0 != "." && $0 != "[" }
            guard newer, !field.isEmpty, field != "id", fields[String(field)] != nil,
                  setAside.insert(String(field)).inserted else {
                guard newer else { return .failure(report) }
                return .failure(UndecodableRecord(key: key, path: report.path, reason: report.reason
                    + " (written by model version \(writtenAt ?? 1), newer than this app's \(schema.version))"))
            }
            fields[String(field)] = schema.defaults[String(field)]
        }
    }

    /// Where and why decoding failed, from the decoder's error.
    private static func report(_ error: DecodingError, key: RecordKey) -> UndecodableRecord {
        let context: DecodingError.Context?
        switch error {
        case .typeMismatch(_, let found), .valueNotFound(_, let found), .dataCorrupted(let found): context = found
        case .keyNotFound(let missing, let found):
            context = DecodingError.Context(codingPath: found.codingPath + [missing], debugDescription: found.debugDescription)
        @unknown default: context = nil
        }
        return UndecodableRecord(key: key, path: context.map { CodingPathText.text($0.codingPath) } ?? "",
                                 reason: context?.debugDescription ?? "\(error)")
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

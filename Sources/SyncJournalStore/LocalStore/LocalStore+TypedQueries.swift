extension LocalStore {
    /// The results of `query` decoded as `Record`, in the query's order; a result that
    /// does not decode is listed in ``TypedRecords/undecodable`` with the field that
    /// failed, never dropped.
    ///
    /// - Throws: ``SyncRecordError/kindMismatch(query:record:)`` when `query` asks about
    ///   another kind than `Record`'s; ``SyncRecordError/store(_:)`` when the store
    ///   cannot be read.
    public func fetch<Record: SyncRecord>(_ type: Record.Type, matching query: Query) throws(SyncRecordError) -> TypedRecords<Record> {
        guard query.kind == Record.kind else { throw .kindMismatch(query: query.kind, record: Record.kind) }
        let stored: [StoreRecord]
        var query = query
        if query.schema == nil {
            let schema = RecordSchema(type)
            if !schema.isIdentity { query.schema = schema }
        }
        do { stored = try fetch(query) } catch { throw .store(error) }
        return TypedRecords(decoding: stored)
    }
}

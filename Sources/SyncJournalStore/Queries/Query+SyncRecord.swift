extension Query {
    /// Every record of `Record`'s kind, ordered by id: the start of a query whose
    /// results ``LocalStore/fetch(_:matching:)`` decodes as `Record`.
    ///
    /// ```swift
    /// let recent = Query(Note.self).order(Field("createdAt").descending).limit(10)
    /// let notes = try await store.fetch(Note.self, matching: recent).values
    /// ```
    ///
    /// Records stored by an older version of the model are filtered and ordered as
    /// they read in this version: renamed, converted and with added fields' defaults.
    public init<Record: SyncRecord>(_ type: Record.Type) {
        let schema = RecordSchema(type)
        self.init(Record.kind, schema: schema.isIdentity ? nil : schema)
    }
}

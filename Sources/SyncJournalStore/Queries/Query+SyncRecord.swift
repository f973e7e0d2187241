extension Query {
    /// Every record of `Record`'s kind, ordered by id: the start of a query whose
    /// results ``LocalStore/fetch(_:matching:)`` decodes as `Record`.
    ///
    /// ```swift
    /// let recent = Query(Note.self).order(Field("createdAt").descending).limit(10)
    /// let notes = try await store.fetch(Note.self, matching: recent).values
    /// ```
    public init<Record: SyncRecord>(_ type: Record.Type) { self.init(Record.kind) }
}

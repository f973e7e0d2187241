import SyncJournalProtocol

extension LocalStore {
    /// The records `query` selects, in its order: the records as the app sees
    /// them (pending local edits included, deleted records never), ties in the
    /// order broken by id.
    ///
    /// ```swift
    /// let inbox = try await store.fetch(Query("note").filter(Field("list") == "inbox").order(Field("due")))
    /// ```
    public func fetch(_ query: Query) throws(StoreError) -> [StoreRecord] {
        try checkReadable()
        return results(of: query)
    }

    /// The first record `query` selects, or `nil` when it selects none.
    public func fetchOne(_ query: Query) throws(StoreError) -> StoreRecord? {
        try checkReadable()
        return results(of: query.limit(1, offset: query.offset)).first
    }

    /// How many records `query` selects (its limit and offset applied).
    public func count(_ query: Query) throws(StoreError) -> Int {
        try checkReadable()
        var selected = matches(of: query).count
        selected = max(0, selected - query.offset)
        if let maximum = query.maximumCount { selected = min(selected, maximum) }
        return selected
    }

    /// Follows the results of `query`: the current results first, then the
    /// new results after every change that alters them. A reader that falls
    /// behind gets the latest results when it asks (never a backlog), and the
    /// store never waits for it. The sequence ends when the store closes or
    /// retires, or when the reading task is cancelled.
    ///
    /// ```swift
    /// for await notes in store.observe(Query("note").filter(Field("list") == "inbox")) {
    ///     print(notes.count, "in the inbox")
    /// }
    /// ```
    public nonisolated func observe(_ query: Query) -> QueryObservation {
        QueryObservation(store: self, query: query)
    }

    /// The results of `query`, with no readability check.
    func results(of query: Query) -> [StoreRecord] {
        var selected = matches(of: query)
        let orderings = query.orderings
        selected.sort { a, b in
            for field in orderings {
                let order = (a.seen[field.name] ?? .null).queryOrder(b.seen[field.name] ?? .null)
                if order != 0 { return field.isDescending ? order > 0 : order < 0 }
            }
            if a.key.id != b.key.id { return a.key.id < b.key.id }
            return a.key.space < b.key.space
        }
        let start = min(query.offset, selected.count)
        let end = query.maximumCount.map { min(selected.count, start + $0) } ?? selected.count
        return selected[start..<end].map { state.storeRecord($0.key, fields: $0.stored) }
    }

    /// The visible records of the query's kind satisfying every filter, unordered: their
    /// fields as stored, and as the query sees them (upgraded by its model, if it has one).
    private func matches(of query: Query) -> [(key: RecordKey, stored: [String: FieldValue], seen: [String: FieldValue])] {
        let terms = query.conditions.flatMap(\.term.conjuncts)
        var selected: [(key: RecordKey, stored: [String: FieldValue], seen: [String: FieldValue])] = []
        var examined = 0
        // Indexes hold stored values; a query that sees an upgraded shape looks at every record.
        let schema = query.schema
        let space = query.space
        forEachCandidate(of: query.kind, terms: schema == nil ? terms : []) { key in
            if let space, key.space != space { return }
            guard let stored = state.visibleFields(of: key) else { return }
            examined += 1
            let seen = schema.map { $0.queryView(stored, writtenAt: state.visibleModelVersion(of: key)) } ?? stored
            if terms.allSatisfy({ $0.matches(seen) }) { selected.append((key, stored, seen)) }
        }
        queryWork.recordsExamined += examined
        return selected
    }

    /// Hands `body` the records that may satisfy `terms`: those an index returns
    /// for the most selective term it can answer, or else every record of `kind`.
    private func forEachCandidate(of kind: String, terms: [QueryCondition.Term], _ body: (RecordKey) -> Void) {
        if fieldIndexes.covers(kind) {
            var best: [RecordKey]?
            for term in terms {
                guard let (field, range) = term.valueRange, let index = fieldIndexes.index(kind: kind, field: field) else { continue }
                let ids = index.ids(in: range)
                if best == nil || ids.count < best!.count { best = ids }
            }
            if let best {
                for id in best { body(id) }
                return
            }
            queryWork.kindScans += 1
            if let index = fieldIndexes.anyIndex(of: kind) {
                for id in index.ids { body(id) }
                return
            }
        }
        queryWork.kindScans += 1
        for key in state.snapshot.keys where key.kind == kind { body(key) }
        for key in state.outbox.keys where key.kind == kind && state.snapshot[key] == nil { body(key) }
    }
}

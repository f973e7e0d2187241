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
                let order = (a.fields[field.name] ?? .null).queryOrder(b.fields[field.name] ?? .null)
                if order != 0 { return field.isDescending ? order > 0 : order < 0 }
            }
            return a.id < b.id
        }
        let start = min(query.offset, selected.count)
        let end = query.maximumCount.map { min(selected.count, start + $0) } ?? selected.count
        return selected[start..<end].map { match in
            let key = RecordKey(kind: query.kind, id: match.id)
            return StoreRecord(kind: query.kind, id: match.id, fields: match.fields, serverUpdatedAt: state.snapshot[key]?.updatedAt,
                               hasPendingChanges: !state.outbox.operations(on: key).isEmpty)
        }
    }

    /// The visible records of the query's kind satisfying every filter, unordered.
    private func matches(of query: Query) -> [(id: String, fields: [String: FieldValue])] {
        let terms = query.conditions.flatMap(\.term.conjuncts)
        var selected: [(id: String, fields: [String: FieldValue])] = []
        var examined = 0
        forEachCandidate(of: query.kind, terms: terms) { id in
            guard let fields = state.visibleFields(of: RecordKey(kind: query.kind, id: id)) else { return }
            examined += 1
            if terms.allSatisfy({ $0.matches(fields) }) { selected.append((id, fields)) }
        }
        queryWork.recordsExamined += examined
        return selected
    }

    /// Hands `body` the ids that may satisfy `terms`: those an index returns
    /// for the most selective term it can answer, or else every record of `kind`.
    private func forEachCandidate(of kind: String, terms: [QueryCondition.Term], _ body: (String) -> Void) {
        if fieldIndexes.covers(kind) {
            var best: [String]?
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
        for key in state.snapshot.keys where key.kind == kind { body(key.id) }
        for key in state.outbox.keys where key.kind == kind && state.snapshot[key] == nil { body(key.id) }
    }
}

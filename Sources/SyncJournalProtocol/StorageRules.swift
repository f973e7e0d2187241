/// What a push and a pull do, whatever the storage (`journals/PROTOCOL.md`,
/// "Push", "Pull"), over ``StorageQueries``. `sync-server`'s SQLite and
/// PostgreSQL storages and the in-memory reference server all decide with
/// these; they add only their transactions, locks and storage-specific checks.
package enum StorageRules {
    /// The refusal of a mutation no storage may apply, or `nil` when it is
    /// within the protocol's limits (``ProtocolLimits``): a kind of 1 to
    /// ``ProtocolLimits/maximumKindBytes`` bytes and a record id of 1 to
    /// ``ProtocolLimits/maximumRecordIDBytes`` bytes, neither holding U+0000;
    /// at most ``ProtocolLimits/maximumFieldsPerRecord`` fields with names of
    /// at most ``ProtocolLimits/maximumFieldNameBytes`` bytes; values nested
    /// at most `FieldValue.maximumNestingDepth` deep; a model version, when
    /// stated, of 1 to ``ProtocolLimits/maximumModelVersion`` (the wire
    /// refuses any other, so only an in-process caller gets this far with one). Every backend refuses
    /// the same mutations with the same reason, permanently, before it
    /// touches its tables.
    package static func refusal(of mutation: Mutation) -> MutationOutcome? {
        if let problem = ProtocolLimits.problem(kind: mutation.kind) ?? ProtocolLimits.problem(recordID: mutation.recordID)
            ?? ProtocolLimits.problem(fieldCount: mutation.fields.count, names: mutation.fields.keys)
            ?? FieldValue.problem(in: mutation.fields)
            ?? mutation.modelVersion.flatMap({ ProtocolLimits.problem(modelVersion: $0) }) {
            return .rejected(reason: problem, permanent: true)
        }
        return nil
    }

    /// Applies one mutation of `user` for a server that remembers operation
    /// ids (the caller answers a resend from what it remembered, and
    /// remembers only applied results).
    ///
    /// - A record belongs to the user who created it: another user's
    ///   mutation is rejected permanently, never applied.
    /// - A create of a live record, or an update or delete whose base is not
    ///   the stored stamp, is a conflict carrying the server's copy.
    /// - Deleting a deleted record is harmless: its tombstone is the answer.
    /// - Every write keeps on the row the highest model version that has
    ///   written the record (``ServerRow/modelVersion``): the stored one,
    ///   a tombstone's included, or the mutation's, whichever is higher.
    ///
    /// `mayBeForgotten` (see ``OperationRetention/mayBeForgotten(_:at:)``):
    /// the mutation is not remembered but may have been applied before its
    /// id was forgotten, so it is judged as by a server that keeps no
    /// operation ids. Only a create differs, as nothing else could apply
    /// twice (an applied update or delete moved the row's stamp off its
    /// base): a create of a live record is ``MutationOutcome/duplicate``
    /// (the device reads it back), and a create over the user's tombstone is
    /// a conflict with `nil` rather than a new row, so a resend never brings
    /// back a deleted record.
    ///
    /// A create whose id is the record's ``OwnedRow/createdBy`` was applied
    /// and forgotten, whatever `mayBeForgotten` says (a device clock far
    /// behind makes an old resend look recent): it is judged the same way.
    package static func apply<Queries: StorageQueries>(_ mutation: Mutation, user: String, mayBeForgotten: Bool = false,
                                                       _ queries: Queries) throws(Queries.Failure) -> MutationOutcome {
        if let refusal = refusal(of: mutation) { return refusal }
        return try applyWithinLimits(mutation, user: user, mayBeForgotten: mayBeForgotten, queries)
    }

    /// ``apply(_:user:_:)`` for a mutation the caller has already found
    /// within the limits (``refusal(of:)`` answered `nil`), so they are not
    /// checked twice.
    package static func applyWithinLimits<Queries: StorageQueries>(_ mutation: Mutation, user: String, mayBeForgotten: Bool = false,
                                                                   _ queries: Queries) throws(Queries.Failure) -> MutationOutcome {
        let key = RecordKey(kind: mutation.kind, id: mutation.recordID)
        let existing = try queries.row(kind: key.kind, id: key.id)
        if let existing, existing.owner != user {
            return .rejected(reason: "forbidden: \(key) belongs to another user", permanent: true)
        }
        let live = existing.flatMap { $0.row.isTombstone ? nil : $0.row }
        let previous = existing?.row.updatedAt
        let modelVersion = highestModelVersion(existing?.row.modelVersion, mutation.modelVersion)
        switch mutation.op {
        case .create:
            let operationID = mutation.operationID.description
            if let existing, mayBeForgotten || existing.createdBy == operationID {
                return live == nil ? .conflict(server: nil) : .duplicate
            }
            if let live { return .conflict(server: live) }
            let row = ServerRow(kind: key.kind, id: key.id, fields: mutation.fields, updatedAt: try queries.nextStamp(after: previous),
                                modelVersion: modelVersion)
            try queries.write(row, owner: user, createdBy: operationID)
            return .applied(row)
        case .update:
            guard var row = live else { return .conflict(server: nil) }
            guard mutation.baseUpdatedAt == row.updatedAt else { return .conflict(server: row) }
            row.fields.merge(mutation.fields) { _, new in new }
            if row.fields.count > ProtocolLimits.maximumFieldsPerRecord {
                return .rejected(reason: "the update would leave \(row.fields.count) fields in \(key), at most \(ProtocolLimits.maximumFieldsPerRecord) in a record",
                                 permanent: true)
            }
            row.updatedAt = try queries.nextStamp(after: previous)
            row.modelVersion = modelVersion
            try queries.write(row, owner: user, createdBy: existing?.createdBy)
            return .applied(row)
        case .delete:
            if let live, mutation.baseUpdatedAt != live.updatedAt { return .conflict(server: live) }
            // Deleting a deleted row is harmless: its tombstone is the answer.
            if live == nil, let existing { return .applied(existing.row) }
            let stamp = try queries.nextStamp(after: previous)
            let tombstone = ServerRow(kind: key.kind, id: key.id, updatedAt: stamp, deletedAt: stamp, modelVersion: modelVersion)
            // The tombstone keeps the create of the life it ends.
            try queries.write(tombstone, owner: user, createdBy: existing?.createdBy)
            return .applied(tombstone)
        }
    }

    /// The higher of two model versions, `nil` only when neither is stated.
    package static func highestModelVersion(_ first: Int?, _ second: Int?) -> Int? {
        guard let first else { return second }
        guard let second else { return first }
        return max(first, second)
    }

    /// Refuses a pull whose limit, kinds or cursors are malformed or over the
    /// protocol's limits (at most ``ProtocolLimits/maximumKindsPerPull``
    /// kinds, each within ``ProtocolLimits/problem(kind:)``), before any query.
    package static func validate(_ request: PullRequest, maximumLimit: Int = ProtocolLimits.maximumPullLimit) throws(PullRefusal) {
        guard request.limit >= 1, request.limit <= maximumLimit else {
            throw .badRequest("limit must be 1 to \(maximumLimit), not \(request.limit)")
        }
        if request.cursors.count > ProtocolLimits.maximumKindsPerPull {
            throw .badRequest("\(request.cursors.count) kinds, at most \(ProtocolLimits.maximumKindsPerPull) in one pull")
        }
        for (kind, cursor) in request.cursors {
            if let problem = ProtocolLimits.problem(kind: kind) { throw .badRequest(problem) }
            guard let cursor = cursor ?? nil else { continue }
            if cursor.id.isEmpty || cursor.id.utf8.count > ProtocolLimits.maximumRecordIDBytes {
                throw .badCursor(kind: kind, reason: "the cursor's id must be 1 to \(ProtocolLimits.maximumRecordIDBytes) bytes of UTF-8")
            }
            if cursor.id.utf8.contains(0) { throw .badCursor(kind: kind, reason: "the cursor's id must not contain U+0000") }
        }
    }

    /// How many rows a pull reads first, before it knows their sizes.
    static let firstPullChunk = 128

    /// One page of `user`'s rows after each kind's cursor, read through
    /// `queries` inside one snapshot: `(updatedAt, id)` order within a kind,
    /// kinds in name order, at most `request.limit` rows and about
    /// ``ProtocolLimits/pullPageByteBudget`` bytes (at least one row).
    ///
    /// Refuses (with ``PullRefusal/cursorExpired(kinds:)``, through
    /// ``StorageQueries/failure(_:)``) every kind whose cursor is behind its
    /// tombstone horizon, unless the request is a resync. On the last page a
    /// kind that would stay behind its horizon gets the horizon as its
    /// cursor: nothing of this user lies between, and a client left there
    /// would be refused for ever.
    package static func page<Queries: StorageQueries>(user: String, _ request: PullRequest,
                                                      _ queries: Queries) throws(Queries.Failure) -> PullPage {
        let limit = request.limit
        let kinds = request.cursors.keys.sorted()
        var horizons: [String: PullCursor] = [:]
        for kind in kinds { horizons[kind] = try queries.horizon(kind: kind) }
        let expired = kinds.filter { kind in
            guard let cursor = request.cursors[kind] ?? nil, let horizon = horizons[kind] else { return false }
            return cursor < horizon
        }
        if !expired.isEmpty && !request.isResync { throw Queries.failure(.cursorExpired(kinds: expired)) }
        // limit + 1 rows: the extra one only says whether there is more.
        // Rows are read in chunks sized to what is left of the byte budget
        // at the sizes seen so far, so a page of large records is never all
        // in memory at once; small records still come in one or two reads.
        var page: [ServerRow] = []
        var bytes = 0
        var overBudget = false
        kinds: for kind in kinds {
            var after = request.cursors[kind] ?? nil
            while page.count <= limit {
                let wanted = limit + 1 - page.count
                let chunk = page.isEmpty ? min(wanted, firstPullChunk)
                    : min(wanted, max(1, (ProtocolLimits.pullPageByteBudget - bytes) / max(1, bytes / page.count)))
                let rows = try queries.rows(owner: user, kind: kind, after: after, limit: chunk)
                for row in rows {
                    bytes += row.approximateWireBytes
                    page.append(row)
                    // Past the budget: this row is the page's last (or the
                    // marker that more is there); at least one row always goes.
                    if bytes > ProtocolLimits.pullPageByteBudget && page.count > 1 {
                        overBudget = true
                        break kinds
                    }
                }
                guard rows.count == chunk, let last = rows.last else { break }
                after = PullCursor(updatedAt: last.updatedAt, id: last.id)
            }
            if page.count > limit { break }
        }
        let hasMore = page.count > limit || overBudget
        if hasMore { page.removeLast() }
        var next: [String: PullCursor] = [:]
        for row in page { next[row.kind] = PullCursor(updatedAt: row.updatedAt, id: row.id) }
        if !hasMore {
            for kind in kinds {
                guard let horizon = horizons[kind] else { continue }
                let reached = next[kind] ?? (request.cursors[kind] ?? nil)
                if reached.map({ $0 < horizon }) ?? true { next[kind] = horizon }
            }
        }
        return PullPage(rows: page, nextCursors: next, hasMore: hasMore)
    }
}

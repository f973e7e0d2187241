import SyncJournalStore
import SyncJournalSync

/// What a push and a pull do, whatever the database: the reference server's
/// semantics (PROTOCOL.md) over ``StorageQueries``. The storages add only
/// their transactions, locks and database-specific checks.
enum StorageRules {
    /// Applies one mutation of `user` (see ``SyncStorage/push(user:_:)``).
    static func apply(_ mutation: Mutation, user: String, _ queries: some StorageQueries) throws(StorageError) -> MutationOutcome {
        if mutation.kind.isEmpty { return .rejected(reason: "empty kind", permanent: true) }
        if mutation.recordID.isEmpty || mutation.recordID.utf8.count > 64 {
            return .rejected(reason: "record id must be 1 to 64 bytes of UTF-8", permanent: true)
        }
        if mutation.fields.keys.contains(where: \.isEmpty) { return .rejected(reason: "empty field name", permanent: true) }
        let key = RecordKey(kind: mutation.kind, id: mutation.recordID)
        let existing = try queries.row(kind: key.kind, id: key.id)
        if let existing, existing.owner != user {
            return .rejected(reason: "forbidden: \(key) belongs to another user", permanent: true)
        }
        let live = existing.flatMap { $0.row.isTombstone ? nil : $0.row }
        switch mutation.op {
        case .create:
            if let live { return .conflict(server: live) }
            let row = ServerRow(kind: key.kind, id: key.id, fields: mutation.fields, updatedAt: try queries.nextStamp())
            try queries.write(row, owner: user)
            return .applied(row)
        case .update:
            guard var row = live else { return .conflict(server: nil) }
            guard mutation.baseUpdatedAt == row.updatedAt else { return .conflict(server: row) }
            row.fields.merge(mutation.fields) { _, new in new }
            row.updatedAt = try queries.nextStamp()
            try queries.write(row, owner: user)
            return .applied(row)
        case .delete:
            if let live, mutation.baseUpdatedAt != live.updatedAt { return .conflict(server: live) }
            // Deleting a deleted row is harmless: its tombstone is the answer.
            if live == nil, let existing { return .applied(existing.row) }
            let stamp = try queries.nextStamp()
            let tombstone = ServerRow(kind: key.kind, id: key.id, updatedAt: stamp, deletedAt: stamp)
            try queries.write(tombstone, owner: user)
            return .applied(tombstone)
        }
    }

    /// Refuses a pull whose limit or cursors are malformed, before any query.
    static func validate(_ request: PullRequest, maximumLimit: Int) throws(StorageError) {
        guard request.limit >= 1, request.limit <= maximumLimit else {
            throw .badRequest("limit must be 1 to \(maximumLimit), not \(request.limit)")
        }
        for (kind, cursor) in request.cursors {
            if kind.isEmpty { throw .badRequest("empty kind") }
            guard let cursor = cursor ?? nil else { continue }
            if cursor.id.isEmpty || cursor.id.utf8.count > 64 {
                throw .badCursor(kind: kind, reason: "the cursor's id must be 1 to 64 bytes of UTF-8")
            }
        }
    }

    /// One page of `user`'s rows, read through `queries` inside one snapshot
    /// (see ``SyncStorage/pull(user:_:)``).
    static func page(user: String, _ request: PullRequest, _ queries: some StorageQueries) throws(StorageError) -> PullPage {
        let limit = request.limit
        let kinds = request.cursors.keys.sorted()
        var horizons: [String: PullCursor] = [:]
        for kind in kinds { horizons[kind] = try queries.horizon(kind: kind) }
        let expired = kinds.filter { kind in
            guard let cursor = request.cursors[kind] ?? nil, let horizon = horizons[kind] else { return false }
            return cursor < horizon
        }
        if !expired.isEmpty && !request.isResync { throw .cursorExpired(kinds: expired) }
        // limit + 1 rows: the extra one only says whether there is more.
        var page: [ServerRow] = []
        for kind in kinds {
            let after = request.cursors[kind] ?? nil
            page += try queries.rows(owner: user, kind: kind, after: after, limit: limit + 1 - page.count)
            if page.count > limit { break }
        }
        let hasMore = page.count > limit
        if hasMore { page.removeLast() }
        var next: [String: PullCursor] = [:]
        for row in page { next[row.kind] = PullCursor(updatedAt: row.updatedAt, id: row.id) }
        if !hasMore {
            // A kind left behind its horizon would be refused for ever: nothing of this user lies between.
            for kind in kinds {
                guard let horizon = horizons[kind] else { continue }
                let reached = next[kind] ?? (request.cursors[kind] ?? nil)
                if reached.map({ $0 < horizon }) ?? true { next[kind] = horizon }
            }
        }
        return PullPage(rows: page, nextCursors: next, hasMore: hasMore)
    }
}

/// A pull page being filled, space after space and kind after kind, within
/// the request's limit and the page's byte budget (``StorageRules/page(user:_:_:)``).
///
/// It reads `limit + 1` rows in all: the extra one only says whether there
/// is more. Rows are read in chunks sized to what is left of the byte budget
/// at the sizes seen so far, so a page of large records is never all in
/// memory at once; small records still come in one or two reads.
struct PullPageDraft {
    let limit: Int
    private var rows: [ServerRow] = []
    private var bytes = 0
    private var overBudget = false

    init(limit: Int) {
        self.limit = limit
    }

    /// Adds the rows of `kind` in `source` after its cursor; `false` once
    /// the page is full (nothing more is read then).
    mutating func fill<Queries: StorageQueries>(from source: PullSource, kind: String,
                                                _ queries: Queries) throws(Queries.Failure) -> Bool {
        var after = source.cursors[kind] ?? nil
        while rows.count <= limit {
            let wanted = limit + 1 - rows.count
            let chunk = rows.isEmpty ? min(wanted, StorageRules.firstPullChunk)
                : min(wanted, max(1, (ProtocolLimits.pullPageByteBudget - bytes) / max(1, bytes / rows.count)))
            let found = try queries.rows(in: source.space, owner: source.owner, kind: kind, after: after, limit: chunk)
            for row in found {
                bytes += row.approximateWireBytes
                rows.append(row)
                // Past the budget: this row is the page's last (or the
                // marker that more is there); at least one row always goes.
                if bytes > ProtocolLimits.pullPageByteBudget && rows.count > 1 {
                    overBudget = true
                    return false
                }
            }
            guard found.count == chunk, let last = found.last else { break }
            after = PullCursor(updatedAt: last.updatedAt, id: last.id)
        }
        return rows.count <= limit
    }

    /// The page: its rows without the marker row, and the cursor after the
    /// last row of each kind, per space.
    func finished() -> PullPage {
        let hasMore = rows.count > limit || overBudget
        let kept = hasMore ? rows.dropLast() : rows[...]
        var next: [String: PullCursor] = [:]
        var nextInSpaces: [SpaceID: [String: PullCursor]] = [:]
        for row in kept {
            let cursor = PullCursor(updatedAt: row.updatedAt, id: row.id)
            if row.space.isPersonal {
                next[row.kind] = cursor
            } else {
                nextInSpaces[row.space, default: [:]][row.kind] = cursor
            }
        }
        return PullPage(rows: Array(kept), nextCursors: next, hasMore: hasMore, nextSpaceCursors: nextInSpaces)
    }
}

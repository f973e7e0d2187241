import SyncJournalStore

/// A pull: the rows after a cursor for each kind, at most `limit` of them.
public struct PullRequest: Sendable, Hashable {
    /// The kinds to pull and where each one's last pull stopped (`nil`: from the start).
    public var cursors: [String: PullCursor?]
    /// The most rows the page may hold.
    public var limit: Int

    /// Creates a request.
    public init(cursors: [String: PullCursor?], limit: Int) {
        self.cursors = cursors
        self.limit = limit
    }
}

/// One page of a pull: rows ordered by `(updatedAt, id)` within each kind,
/// tombstones included, and the cursor after the page for each kind it touched.
public struct PullPage: Sendable, Hashable {
    /// The rows (tombstones carry `deletedAt`).
    public var rows: [ServerRow]
    /// The cursor after this page, per kind that had rows.
    public var nextCursors: [String: PullCursor]
    /// Whether more rows wait after this page.
    public var hasMore: Bool

    /// Creates a page.
    public init(rows: [ServerRow], nextCursors: [String: PullCursor], hasMore: Bool) {
        self.rows = rows
        self.nextCursors = nextCursors
        self.hasMore = hasMore
    }
}

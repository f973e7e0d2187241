import SyncJournalStore

/// A pull: the rows after a cursor for each kind, at most `limit` of them.
public struct PullRequest: Sendable, Hashable {
    /// The kinds to pull and where each one's last pull stopped (`nil`: from the start).
    public var cursors: [String: PullCursor?]
    /// The most rows the page may hold.
    public var limit: Int
    /// Whether this request belongs to a full re-pull after
    /// ``TransportError/cursorExpired(kinds:)``. The client replaces its
    /// snapshot at the end, so a deletion it misses cannot fool it: the server
    /// must not refuse such a request's cursors as expired (its later pages
    /// carry cursors older than the server's tombstone horizon).
    public var isResync: Bool

    /// Creates a request.
    ///
    /// ```swift
    /// let request = PullRequest(cursors: ["pin": cursor], limit: 500)
    /// let again = PullRequest(cursors: ["pin": nil], limit: 500, isResync: true)   // a re-pull from the start
    /// ```
    public init(cursors: [String: PullCursor?], limit: Int, isResync: Bool = false) {
        self.cursors = cursors
        self.limit = limit
        self.isResync = isResync
    }
}

/// One page of a pull: rows ordered by `(updatedAt, id)` within each kind,
/// tombstones included, and the cursor after the page for each kind it touched.
public struct PullPage: Sendable, Hashable {
    /// The rows (tombstones carry `deletedAt`).
    public var rows: [ServerRow]
    /// The cursor after this page, per kind that had rows: the position of
    /// the kind's last row in the page. On the last page (`hasMore` false) a
    /// kind's cursor may lie beyond its last row (or be given for a kind with
    /// no rows): the server has nothing for this user up to it, as after
    /// tombstones it purged, and a client that stopped at its last row would
    /// stay behind the server's tombstone horizon for ever.
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

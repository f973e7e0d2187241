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
    /// The identity of the server's database (`nil`: a server that has
    /// none, which keeps working as before identities).
    public var server: ServerIdentity?

    /// Creates a page.
    public init(rows: [ServerRow], nextCursors: [String: PullCursor], hasMore: Bool, server: ServerIdentity? = nil) {
        self.rows = rows
        self.nextCursors = nextCursors
        self.hasMore = hasMore
        self.server = server
    }
}

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
    /// Per shared space that had rows in the page (or whose cursor moved
    /// past purged tombstones on the last page), the cursor after it per
    /// kind, as ``nextCursors`` for the personal space.
    public var nextSpaceCursors: [SpaceID: [String: PullCursor]]
    /// The spaces the user is a member of whose description is newer than
    /// the one the request held, or that it did not name (joined).
    public var spaces: [Space]
    /// The spaces the request named that the user is not a member of: left,
    /// removed, deleted, or never one (the server never says which).
    public var lostSpaces: [SpaceID]

    /// Creates a page.
    public init(rows: [ServerRow], nextCursors: [String: PullCursor], hasMore: Bool, server: ServerIdentity? = nil,
                nextSpaceCursors: [SpaceID: [String: PullCursor]] = [:], spaces: [Space] = [], lostSpaces: [SpaceID] = []) {
        self.rows = rows
        self.nextCursors = nextCursors
        self.hasMore = hasMore
        self.server = server
        self.nextSpaceCursors = nextSpaceCursors
        self.spaces = spaces
        self.lostSpaces = lostSpaces
    }
}

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
    /// The server the device expects (`nil`: none yet, as on a first
    /// sync): any other, or one behind it, refuses the pull with
    /// ``TransportError/serverMismatch(_:)``.
    public var expectation: ServerExpectation?
    /// The shared spaces the device syncs and what it holds of each
    /// (journals/PROTOCOL.md, "Pull across spaces"); `nil` pulls the
    /// personal space alone, as a device that knows nothing of spaces does.
    /// Every space the user is a member of is pulled, those not named here
    /// from the start; the kinds pulled in each are the keys of ``cursors``.
    public var spaces: [SpaceID: SpaceCursors]?

    /// Creates a request.
    ///
    /// ```swift
    /// let request = PullRequest(cursors: ["pin": cursor], limit: 500)
    /// let again = PullRequest(cursors: ["pin": nil], limit: 500, isResync: true)   // a re-pull from the start
    /// ```
    public init(cursors: [String: PullCursor?], limit: Int, isResync: Bool = false, expectation: ServerExpectation? = nil,
                spaces: [SpaceID: SpaceCursors]? = nil) {
        self.cursors = cursors
        self.limit = limit
        self.isResync = isResync
        self.expectation = expectation
        self.spaces = spaces
    }
}

import SyncJournalProtocol

/// The body of `POST /v1/sync/wait`: the kinds a device follows, where it
/// has pulled each to, and how long the server may hold the request.
///
/// ```swift
/// let request = ChangeWaitRequest(cursors: ["pin": nil], timeoutMilliseconds: 30_000)
/// let body = ChangeWaitRequestCodec.encode(request)
/// ```
public struct ChangeWaitRequest: Sendable, Hashable {
    /// The kinds to watch and each one's pull position (`nil`: from the start), as in a pull.
    public var cursors: [String: PullCursor?]
    /// How long the server may hold the request before answering `{"changed": false}`
    /// (the server caps it; see journals/PROTOCOL.md, "Waiting for changes").
    public var timeoutMilliseconds: Int64
    /// The shared spaces the device follows and what it holds of each, as
    /// in a pull (``PullRequest/spaces``); `nil` follows the personal space alone.
    public var spaces: [SpaceID: SpaceCursors]?

    /// Creates a request.
    ///
    /// ```swift
    /// let request = ChangeWaitRequest(cursors: ["note": cursor, "pin": nil], timeoutMilliseconds: 30_000)
    /// ```
    public init(cursors: [String: PullCursor?], timeoutMilliseconds: Int64, spaces: [SpaceID: SpaceCursors]? = nil) {
        self.cursors = cursors
        self.timeoutMilliseconds = timeoutMilliseconds
        self.spaces = spaces
    }
}

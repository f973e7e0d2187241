/// How the engine talks to a server. Implementations: the in-memory
/// reference server's transport, a fault-injecting wrapper for tests, HTTP.
///
/// ```swift
/// struct MyTransport: SyncTransport {
///     func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] { … }
///     func pull(_ request: PullRequest) async throws(TransportError) -> PullPage { … }
/// }
/// ```
public protocol SyncTransport: Sendable {
    /// Sends mutations in order and returns one result per mutation.
    func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult]
    /// Sends mutations in order, to be applied only by the server
    /// `expectation` names and only if it is not behind it (else
    /// ``TransportError/serverMismatch(_:)``, with nothing applied). The
    /// engine calls this one. The default ignores the expectation and calls
    /// ``push(_:)``, as a server without identities does.
    func push(_ mutations: [Mutation], expecting expectation: ServerExpectation?) async throws(TransportError) -> [MutationResult]
    /// Fetches one page of server changes.
    func pull(_ request: PullRequest) async throws(TransportError) -> PullPage
    /// Reads one row as this user sees it now (`nil`: none, or not visible),
    /// to confirm a ``MutationOutcome/duplicate`` or explain a
    /// ``MutationOutcome/noMatch``. A server that remembers operation ids
    /// never answers those, so it need not implement this.
    func read(kind: String, id: String) async throws(TransportError) -> ServerRow?
    /// Waits until the server holds rows after `cursors` (the kinds this
    /// device follows, at the positions it has pulled to), or `timeout`
    /// passes. A wait opened after changes already happened returns
    /// ``ChangeWaitResult/changed`` at once, so nothing slips between a pull
    /// and the next wait. Cancelling the calling task ends the wait. A
    /// transport without change notifications need not implement this: the
    /// default answers ``ChangeWaitResult/notSupported``.
    func waitForChanges(after cursors: [String: PullCursor?], timeout: Duration) async throws(TransportError) -> ChangeWaitResult
    /// Reads one row of any space, as ``read(kind:id:)`` does for the
    /// personal space (`nil` also for a space the user is not a member of).
    /// The default reads personal rows with ``read(kind:id:)`` and refuses
    /// shared ones.
    func read(_ key: RecordKey) async throws(TransportError) -> ServerRow?
    /// Waits as ``waitForChanges(after:timeout:)`` does, following the
    /// shared spaces `spaces` holds as well (`nil`: the personal space
    /// alone): a push into any space the user is a member of, or a change
    /// to the user's memberships, ends the wait. The default follows the
    /// personal space alone.
    func waitForChanges(after cursors: [String: PullCursor?], spaces: [SpaceID: SpaceCursors]?,
                        timeout: Duration) async throws(TransportError) -> ChangeWaitResult
    /// Sends one membership change and returns the space as it is after it
    /// (`nil` after ``SpaceChange/leave(_:)`` and ``SpaceChange/delete(_:)``).
    /// A refusal is ``TransportError/spaceRefused(_:)``. The default: a
    /// transport to a server without spaces, a permanent error.
    func change(_ change: SpaceChange) async throws(TransportError) -> Space?
    /// Every shared space the user is a member of, ordered by id. The
    /// default: a transport to a server without spaces, a permanent error.
    func spaces() async throws(TransportError) -> [Space]
    /// Which of `contents` the server holds whole for this user, and how
    /// much of this user's unfinished upload of each it keeps
    /// (journals/PROTOCOL.md, "Attachments"), in the order asked.
    func attachmentStatus(_ contents: [AttachmentStatusRequest]) async throws(TransportError) -> [AttachmentStatus]
    /// Sends one chunk of an upload, at the offset the server last reported.
    func uploadAttachment(_ chunk: AttachmentChunk) async throws(TransportError) -> AttachmentUploadProgress
    /// Fetches at most `length` bytes of `content` from `offset`.
    func downloadAttachment(_ content: ContentHash, offset: Int64, length: Int) async throws(TransportError) -> AttachmentDownload
}

extension SyncTransport {
    /// Ignores the expectation: a transport to a server without identities.
    public func push(_ mutations: [Mutation], expecting expectation: ServerExpectation?) async throws(TransportError) -> [MutationResult] {
        try await push(mutations)
    }

    /// Not supported: a permanent error.
    public func read(kind: String, id: String) async throws(TransportError) -> ServerRow? {
        throw .permanent(reason: "this transport cannot read single rows")
    }

    /// Not supported: the engine pulls on its idle interval instead.
    public func waitForChanges(after cursors: [String: PullCursor?], timeout: Duration) async throws(TransportError) -> ChangeWaitResult {
        .notSupported
    }

    /// Personal rows through ``read(kind:id:)``; a shared row is a permanent error.
    public func read(_ key: RecordKey) async throws(TransportError) -> ServerRow? {
        guard key.space.isPersonal else { throw .permanent(reason: "this transport has no shared spaces") }
        return try await read(kind: key.kind, id: key.id)
    }

    /// Follows the personal space alone, through ``waitForChanges(after:timeout:)``.
    public func waitForChanges(after cursors: [String: PullCursor?], spaces: [SpaceID: SpaceCursors]?,
                               timeout: Duration) async throws(TransportError) -> ChangeWaitResult {
        try await waitForChanges(after: cursors, timeout: timeout)
    }

    /// Not supported: a permanent error.
    public func change(_ change: SpaceChange) async throws(TransportError) -> Space? {
        throw .permanent(reason: "this transport has no shared spaces")
    }

    /// Not supported: a permanent error.
    public func spaces() async throws(TransportError) -> [Space] {
        throw .permanent(reason: "this transport has no shared spaces")
    }

    /// Not supported: a permanent error.
    public func attachmentStatus(_ contents: [AttachmentStatusRequest]) async throws(TransportError) -> [AttachmentStatus] {
        throw .permanent(reason: "this transport carries no attachments")
    }

    /// Not supported: a permanent error.
    public func uploadAttachment(_ chunk: AttachmentChunk) async throws(TransportError) -> AttachmentUploadProgress {
        throw .permanent(reason: "this transport carries no attachments")
    }

    /// Not supported: a permanent error.
    public func downloadAttachment(_ content: ContentHash, offset: Int64, length: Int) async throws(TransportError) -> AttachmentDownload {
        throw .permanent(reason: "this transport carries no attachments")
    }
}

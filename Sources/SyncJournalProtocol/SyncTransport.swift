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
}

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
    /// Fetches one page of server changes.
    func pull(_ request: PullRequest) async throws(TransportError) -> PullPage
}

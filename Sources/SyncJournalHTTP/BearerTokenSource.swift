/// Where the transport gets its bearer token: the app's provider, asked on
/// first use and again after the server refuses the token (401). Requests
/// that are refused together share one refresh.
actor BearerTokenSource {
    private let provider: @Sendable () async throws -> String
    private var current: String?
    private var fetching: Task<String, any Error>?

    init(_ provider: @escaping @Sendable () async throws -> String) {
        self.provider = provider
    }

    /// The token to send: the one in hand, or the provider's.
    func token() async throws -> String {
        if let current { return current }
        return try await fetch()
    }

    /// A token to replace `rejected`: the one in hand if another request
    /// already refreshed it, otherwise a fresh one from the provider.
    func refresh(rejected: String) async throws -> String {
        if let current, current != rejected { return current }
        current = nil
        return try await fetch()
    }

    private func fetch() async throws -> String {
        if let fetching { return try await fetching.value }
        let provider = self.provider
        let task = Task { try await provider() }
        fetching = task
        defer { fetching = nil }
        let token = try await task.value
        current = token
        return token
    }
}

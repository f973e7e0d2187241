import SyncJournalProtocol
import SyncJournalTesting

/// A server whose database the test can swap under a device, as an
/// operator resets, replaces or restores one: each database is a
/// ``ReferenceServer`` with its identity (`nil`: an old server without one).
/// Its transport sends the identity with every pull page and refuses, before
/// applying anything, a request whose expectation names another identity
/// or a stamp past the database's clock (every stamp it issued is at most
/// its clock). With `enforces` false it only reports its identity, as a
/// server that does not check expectations.
actor SwappableServer {
    private(set) var database: ReferenceServer
    private(set) var identity: ServerIdentity?
    var enforces = true
    /// Requests refused with a mismatch.
    private(set) var refusals = 0
    /// The expectation of every request, in order.
    private(set) var expectations: [ServerExpectation?] = []

    init(_ database: ReferenceServer, identity: ServerIdentity?) {
        self.database = database
        self.identity = identity
    }

    /// Puts `database` with `identity` in place of the current one.
    func swap(to database: ReferenceServer, identity: ServerIdentity?) {
        self.database = database
        self.identity = identity
    }

    func setEnforces(_ value: Bool) { enforces = value }

    /// Refuses a request the database must not serve, or returns the database.
    func admit(_ expectation: ServerExpectation?) async throws(TransportError) -> (ReferenceServer, ServerIdentity?) {
        expectations.append(expectation)
        if enforces, let identity, let expectation {
            if expectation.identity != identity {
                refusals += 1
                throw .serverMismatch(.differentServer(expected: expectation.identity, found: identity))
            }
            let latest = await database.now
            if let seen = expectation.seenStamp, seen > latest {
                refusals += 1
                throw .serverMismatch(.behind(identity: identity, seenStamp: seen, latestStamp: latest))
            }
        }
        return (database, identity)
    }

    func transport(user: String = "u1") -> SwappableTransport { SwappableTransport(server: self, user: user) }
}

/// The transport to a ``SwappableServer``.
struct SwappableTransport: SyncTransport {
    let server: SwappableServer
    let user: String

    func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
        try await push(mutations, expecting: nil)
    }

    func push(_ mutations: [Mutation], expecting expectation: ServerExpectation?) async throws(TransportError) -> [MutationResult] {
        let (database, _) = try await server.admit(expectation)
        return try await database.transport(user: user).push(mutations)
    }

    func pull(_ request: PullRequest) async throws(TransportError) -> PullPage {
        let (database, identity) = try await server.admit(request.expectation)
        var page = try await database.transport(user: user).pull(request)
        page.server = identity
        return page
    }

    func read(kind: String, id: String) async throws(TransportError) -> ServerRow? {
        let (database, _) = try await server.admit(nil)
        return try await database.transport(user: user).read(kind: kind, id: id)
    }
}

import Testing
import SyncJournalProtocol
import SyncJournalTesting

/// The in-memory reference server has an identity and refuses a device
/// that expects another server, or one further along (journals/PROTOCOL.md,
/// "Server identity"); tests can reset, copy, restore and swap its database.
@Suite("Reference server: identity, reset, restore and swap")
struct ReferenceServerIdentityTests {
    static let a = ServerIdentity("server-a")!
    static let b = ServerIdentity("server-b")!

    /// The error a call throws, or `nil` when it succeeds.
    static func failure<T>(_ body: () async throws(TransportError) -> T) async -> TransportError? {
        do throws(TransportError) {
            _ = try await body()
            return nil
        } catch {
            return error
        }
    }

    static func create(_ id: String) -> Mutation {
        Mutation(operationID: .random(), kind: "pin", op: .create, recordID: id, fields: ["title": .string(id)], baseUpdatedAt: nil)
    }

    @Test("a new server has a random identity, pages carry it, and two servers differ")
    func identityOnPages() async throws {
        let first = ReferenceServer()
        let second = ReferenceServer()
        let identity = try #require(await first.identity)
        #expect(await second.identity != identity)
        let page = try await first.transport(user: "u1").pull(PullRequest(cursors: ["pin": nil], limit: 10))
        #expect(page.server == identity)
        #expect(ServerIdentity(identity.text) == identity, "a valid identity's text")
        #expect(identity.text.count == 36)
    }

    @Test("a push expecting the same server with a stamp it issued is applied; another identity is refused whole with nothing applied")
    func differentServerRefused() async throws {
        let server = ReferenceServer(identity: Self.a)
        let transport = server.transport(user: "u1")
        _ = try await transport.push([Self.create("p1")], expecting: ServerExpectation(identity: Self.a, seenStamp: nil))
        let latest = await server.latestStamp
        _ = try await transport.push([Self.create("p2")], expecting: ServerExpectation(identity: Self.a, seenStamp: latest))
        let refused = await Self.failure { () async throws(TransportError) in
            try await transport.push([Self.create("p3"), Self.create("p4")], expecting: ServerExpectation(identity: Self.b, seenStamp: nil))
        }
        #expect(refused == .serverMismatch(.differentServer(expected: Self.b, found: Self.a)))
        #expect(await server.rows(user: "u1", kind: "pin").map(\.id) == ["p1", "p2"], "nothing of the refused push applied")
        #expect(await server.appliedMutations == 2)
        let pullRefused = await Self.failure { () async throws(TransportError) in
            try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10, expectation: ServerExpectation(identity: Self.b, seenStamp: nil)))
        }
        #expect(pullRefused == .serverMismatch(.differentServer(expected: Self.b, found: Self.a)))
    }

    @Test("a device that pulled further than the server's latest stamp is refused as behind, on push and pull")
    func behindRefused() async throws {
        let server = ReferenceServer(identity: Self.a)
        let transport = server.transport(user: "u1")
        _ = try await transport.push([Self.create("p1")])
        let latest = await server.latestStamp
        let ahead = ServerExpectation(identity: Self.a, seenStamp: latest + 1)
        let expected = TransportError.serverMismatch(.behind(identity: Self.a, seenStamp: latest + 1, latestStamp: latest))
        #expect(await Self.failure { () async throws(TransportError) in try await transport.push([Self.create("p2")], expecting: ahead) } == expected)
        #expect(await Self.failure { () async throws(TransportError) in
            try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10, expectation: ahead))
        } == expected)
        #expect(await server.rows(user: "u1", kind: "pin").map(\.id) == ["p1"])
    }

    @Test("purging tombstones never lowers the latest stamp")
    func purgeKeepsLatest() async throws {
        let server = ReferenceServer(identity: Self.a)
        let transport = server.transport(user: "u1")
        let created = try #require(try await transport.push([Self.create("p1")]).first?.outcome)
        guard case .applied(let row) = created else { Issue.record("not applied"); return }
        await server.tick(1)
        _ = try await transport.push([Mutation(operationID: .random(), kind: "pin", op: .delete, recordID: "p1", fields: [:],
                                               baseUpdatedAt: row.updatedAt)])
        let page = try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10))
        let seen = try #require(page.nextCursors["pin"]).updatedAt
        let before = await server.latestStamp
        await server.tick(10)
        #expect(await server.purgeTombstones(olderThan: await server.now) == 1)
        #expect(await server.latestStamp == before)
        #expect(before >= seen)
        // The device that pulled the tombstone is still served.
        _ = try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10, isResync: true,
                                                 expectation: ServerExpectation(identity: Self.a, seenStamp: seen)))
    }

    @Test("a reset empties the database and changes the identity; a restore goes back in time with the same identity; a swap brings the other's")
    func resetRestoreSwap() async throws {
        let server = ReferenceServer(identity: Self.a)
        let other = ReferenceServer(identity: Self.b)
        let transport = server.transport(user: "u1")
        _ = try await transport.push([Self.create("p1")])
        let backup = await server.snapshot()
        let backupLatest = await server.latestStamp
        await server.tick(5)
        _ = try await transport.push([Self.create("p2")])
        let seen = await server.latestStamp
        #expect(seen > backupLatest)

        await server.restore(backup)
        #expect(await server.identity == Self.a)
        #expect(await server.latestStamp == backupLatest, "the stamp counter went back with the data")
        #expect(await server.rows(user: "u1", kind: "pin").map(\.id) == ["p1"])
        #expect(await Self.failure { () async throws(TransportError) in
            try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10, expectation: ServerExpectation(identity: Self.a, seenStamp: seen)))
        } == .serverMismatch(.behind(identity: Self.a, seenStamp: seen, latestStamp: backupLatest)))
        // A new write stamps from the clock, which did not go back: the
        // counter passes the device's stamp (what only a new identity catches).
        await server.tick(1)
        _ = try await transport.push([Self.create("p3")])
        #expect(await server.latestStamp > seen)

        _ = try await other.transport(user: "u1").push([Self.create("q1")])
        await server.restore(await other.snapshot())
        #expect(await server.identity == Self.b)
        #expect(await server.rows(user: "u1", kind: "pin").map(\.id) == ["q1"])

        await server.reset(identity: ServerIdentity("fresh"))
        #expect(await server.identity == ServerIdentity("fresh"))
        #expect(await server.rows(user: "u1", kind: "pin").isEmpty)
        #expect(await server.latestStamp == 0)
        await server.reset()
        let random = try #require(await server.identity)
        #expect(random != ServerIdentity("fresh"))
    }

    @Test("a server without an identity ignores expectations and pages carry none; a new identity keeps the data")
    func oldServerAndNewIdentity() async throws {
        let server = ReferenceServer(identity: nil)
        let transport = server.transport(user: "u1")
        _ = try await transport.push([Self.create("p1")], expecting: ServerExpectation(identity: Self.a, seenStamp: .max))
        let page = try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10, expectation: ServerExpectation(identity: Self.a, seenStamp: .max)))
        #expect(page.server == nil)
        #expect(page.rows.map(\.id) == ["p1"])
        await server.setIdentity(Self.b)
        #expect(await Self.failure { () async throws(TransportError) in
            try await transport.push([Self.create("p2")], expecting: ServerExpectation(identity: Self.a, seenStamp: nil))
        } == .serverMismatch(.differentServer(expected: Self.a, found: Self.b)))
        #expect(await server.rows(user: "u1", kind: "pin").map(\.id) == ["p1"])
    }

    @Test("the fault-injecting transport passes the expectation on")
    func faultInjectingForwards() async throws {
        let server = ReferenceServer(identity: Self.a)
        let faulty = FaultInjectingTransport(server.transport(user: "u1"))
        #expect(await Self.failure { () async throws(TransportError) in
            try await faulty.push([Self.create("p1")], expecting: ServerExpectation(identity: Self.b, seenStamp: nil))
        } == .serverMismatch(.differentServer(expected: Self.b, found: Self.a)))
    }

    @Test("random identities are valid UUID-shaped text and differ", arguments: 0..<50)
    func randomIdentities(_ round: Int) {
        let identity = ServerIdentity.random()
        #expect(ServerIdentity(identity.text) == identity)
        let parts = identity.text.split(separator: "-").map(\.count)
        #expect(parts == [8, 4, 4, 4, 12])
        #expect(identity.text.dropFirst(14).first == "4")
        #expect(identity != ServerIdentity.random())
    }
}

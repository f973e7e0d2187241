import Foundation
import SyncJournalTestSupport
import Testing
import SyncJournalHTTP
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// The sync engine with `HTTPTransport` (URLSession) against an in-process `sync-server`.
@Suite("the sync engine over HTTPTransport against sync-server")
struct EngineOverHTTPTests {
    static func store(_ name: String) async throws -> LocalStore {
        let disk = SimulatedDisk()
        disk.createDirectory("/device")
        return try await LocalStore.open(path: "/device/\(name).journal", options: .init(system: disk, clock: StillClock()))
    }

    static func engine(_ store: LocalStore, _ fixture: SyncServerFixture, token: String) -> SyncEngine {
        let transport = HTTPTransport(baseURL: URL(string: "http://127.0.0.1:\(fixture.port)")!, token: token, timeout: .seconds(20))
        return SyncEngine(store: store, transport: transport, options: .init(kinds: ["pin"], jitterSeed: 1))
    }

    @Test("two devices of one user exchange a create, an update and a delete, every field type intact")
    func twoDevices() async throws {
        let fixture = try SyncServerFixture(maximumBatchSize: 100, maximumBodyBytes: 1 << 20)
        let phone = try await Self.store("phone")
        let tablet = try await Self.store("tablet")
        let phoneEngine = Self.engine(phone, fixture, token: "t-alice")
        let tabletEngine = Self.engine(tablet, fixture, token: "t-alice")
        let fields: [String: FieldValue] = ["title": .string("Crux ☕️"), "grade": .int(.max), "ratio": .double(-0.0),
                                            "blob": .bytes([0, 255]), "tags": .stringSet(["a", "é"]), "gone": .null, "odd": .double(.infinity)]
        let id = try await phone.create("pin", id: "p1", fields: fields).id
        #expect(await phoneEngine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await tabletEngine.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(try await tablet.record("pin", id: id)?.fields == fields)

        _ = try await tablet.update("pin", id: id, changes: ["grade": .int(.min)])
        #expect(await tabletEngine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await phoneEngine.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(try await phone.record("pin", id: id)?.fields["grade"] == .int(.min))

        try await phone.delete("pin", id: id)
        #expect(await phoneEngine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await tabletEngine.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(try await tablet.record("pin", id: id) == nil)
    }

    @Test("timestamps, UUIDs, arrays and objects cross HTTP and sync-server's storage to another device intact")
    func typedValuesBetweenDevices() async throws {
        let fixture = try SyncServerFixture(maximumBatchSize: 100, maximumBodyBytes: 1 << 20)
        let phone = try await Self.store("phone")
        let tablet = try await Self.store("tablet")
        let phoneEngine = Self.engine(phone, fixture, token: "t-alice")
        let tabletEngine = Self.engine(tablet, fixture, token: "t-alice")
        let fields: [String: FieldValue] = ["at": .timestamp(-1_764_000_000_123_456), "owner": .uuid(UUID(uuidString: "ce56971c-de35-4897-821e-fc0b1046c8bf")!),
                                            "list": .array([.int(1), .double(.nan), .array([]), .stringSet(["a"])]),
                                            "place": .object(["city": .string("Roma"), "geo": .object(["lat": .double(41.9)])]),
                                            "deepest": TypedFieldStorageTests.deepest]
        _ = try await phone.create("pin", id: "p1", fields: fields)
        #expect(await phoneEngine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await tabletEngine.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(try await tablet.record("pin", id: "p1")?.fields == fields)
    }

    @Test("a push over --max-batch is refused 413 and the engine splits it until everything is acknowledged")
    func splitsOnTooLarge() async throws {
        let fixture = try SyncServerFixture(maximumBatchSize: 2, maximumBodyBytes: 1 << 20)
        let store = try await Self.store("device")
        for index in 0..<5 { _ = try await store.create("pin", id: "p\(index)", fields: ["n": .int(Int64(index))]) }
        let engine = Self.engine(store, fixture, token: "t-alice")
        var outcome = await engine.sync()
        for _ in 0..<8 where try await !store.outboxOperations().isEmpty { outcome = await engine.sync() }
        #expect(try await store.outboxOperations().isEmpty, "\(outcome)")
        #expect(try fixture.pullAll().map(\.id).sorted() == ["p0", "p1", "p2", "p3", "p4"])
    }

    @Test("another user's device cannot see or change the first user's records")
    func usersAreSeparate() async throws {
        let fixture = try SyncServerFixture(maximumBatchSize: 100, maximumBodyBytes: 1 << 20)
        let alice = try await Self.store("alice")
        let bob = try await Self.store("bob")
        _ = try await alice.create("pin", id: "shared-id", fields: ["owner": .string("alice")])
        #expect(await Self.engine(alice, fixture, token: "t-alice").sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        _ = try await bob.create("pin", id: "shared-id", fields: ["owner": .string("bob")])
        #expect(await Self.engine(bob, fixture, token: "t-bob").sync() == .ok(pushed: 1, pulled: 1, conflicts: 0),
                "each user's personal space holds its own record of the id")
        #expect(try fixture.pullAll(token: "t-bob").map(\.fields) == [["owner": .string("bob")]])
        #expect(try fixture.pullAll(token: "t-alice").map(\.fields) == [["owner": .string("alice")]])
    }

    @Test("a device keeps syncing after the server restarts on the same database")
    func serverRestart() async throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-server"); defer { directory.remove() }
        var options = SyncServerOptions()
        options.port = 0
        options.databasePath = directory.file("restart.sqlite")
        try options.users.add(token: "t-alice", user: "alice")
        let first = try SyncServer(options: options)
        try first.start()
        let store = try await Self.store("device")
        func engine(_ server: SyncServer) -> SyncEngine {
            SyncEngine(store: store, transport: HTTPTransport(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, token: "t-alice"),
                       options: .init(kinds: ["pin"], jitterSeed: 1))
        }
        let id = try await store.create("pin", id: "p1", fields: ["n": .int(1)]).id
        #expect(await engine(first).sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        first.shutdown()
        let second = try SyncServer(options: options)
        try second.start()
        defer { second.shutdown() }
        _ = try await store.update("pin", id: id, changes: ["n": .int(2)])
        #expect(await engine(second).sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(try second.storage.read(user: "alice", kind: "pin", id: "p1")?.fields == ["n": .int(2)])
    }
}

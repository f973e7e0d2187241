import Testing
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// A device whose push reply was lost resends after the server forgot the
/// operation ids: through the sync engine, on every backend.
@Suite("the sync engine against a server that forgot its operation ids")
struct OperationRetentionEngineTests {
    static let retention = OperationRetention(retentionMilliseconds: 10_000)

    /// A device on `fixture`'s storage whose edits are queued at the
    /// fixture's starting time, behind a transport that can lose replies.
    struct Device {
        let store: LocalStore
        let faulty: FaultInjectingTransport
        let engine: SyncEngine

        init(_ name: String, _ fixture: StorageUnderTest) async throws {
            store = try await EngineOverHTTPTests.store(name)
            faulty = FaultInjectingTransport(StorageTransport(storage: fixture.storage, user: "alice"))
            engine = SyncEngine(store: store, transport: faulty, options: .init(kinds: ["pin"], jitterSeed: 1))
        }
    }

    /// Moves the server's clock past the retention of everything so far and prunes.
    static func forgetEverything(_ fixture: StorageUnderTest) throws {
        fixture.clock.set(fixture.clock.now + 30_000)
        while try fixture.storage.pruneRememberedOperations(limit: 100) > 0 {}
        #expect(try fixture.rememberedCount() == 0)
    }

    @Test("a create whose reply was lost, resent after the retention, is read back and acknowledged, applied once",
          arguments: StorageBackend.tested)
    func lostCreateReply(_ backend: StorageBackend) async throws {
        let fixture = try StorageUnderTest(backend, operationRetention: Self.retention)
        let phone = try await Device("phone", fixture)
        _ = try await phone.store.create("pin", id: "p1", fields: ["title": .string("Crux")])
        await phone.faulty.inject(.loseReply, on: .push)
        #expect(await phone.engine.sync().isRetryLater)
        let applied = try #require(try fixture.storage.read(user: "alice", kind: "pin", id: "p1"))
        try Self.forgetEverything(fixture)

        #expect(await phone.engine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(try fixture.storage.read(user: "alice", kind: "pin", id: "p1") == applied, "not applied a second time")
        let local = try #require(try await phone.store.record("pin", id: "p1"))
        #expect(local.fields == applied.fields)
        #expect(local.hasPendingChanges == false)
        #expect(try await phone.store.outboxOperations().isEmpty)
    }

    @Test("an update whose reply was lost, resent after the retention, is not applied twice and the device ends with the server's copy",
          arguments: StorageBackend.tested)
    func lostUpdateReply(_ backend: StorageBackend) async throws {
        let fixture = try StorageUnderTest(backend, operationRetention: Self.retention)
        let phone = try await Device("phone", fixture)
        _ = try await phone.store.create("pin", id: "p1", fields: ["n": .int(1)])
        #expect(await phone.engine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        _ = try await phone.store.update("pin", id: "p1", changes: ["n": .int(2)])
        await phone.faulty.inject(.loseReply, on: .push)
        #expect(await phone.engine.sync().isRetryLater)
        let applied = try #require(try fixture.storage.read(user: "alice", kind: "pin", id: "p1"))
        try Self.forgetEverything(fixture)

        guard case .ok = await phone.engine.sync() else { Issue.record("the resend did not settle"); return }
        #expect(try fixture.storage.read(user: "alice", kind: "pin", id: "p1") == applied, "the stamp did not move: applied once")
        #expect(try await phone.store.record("pin", id: "p1")?.fields == ["n": .int(2)])
        #expect(try await phone.store.outboxOperations().isEmpty)
    }

    @Test("a create whose reply was lost and whose record another device deleted is not brought back by its resend after the retention",
          arguments: StorageBackend.tested)
    func lostCreateReplyThenDeletedElsewhere(_ backend: StorageBackend) async throws {
        let fixture = try StorageUnderTest(backend, operationRetention: Self.retention)
        let phone = try await Device("phone", fixture)
        let tablet = try await Device("tablet", fixture)
        _ = try await phone.store.create("pin", id: "p1", fields: ["title": .string("Crux")])
        await phone.faulty.inject(.loseReply, on: .push)
        #expect(await phone.engine.sync().isRetryLater)
        #expect(await tablet.engine.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        _ = try await tablet.store.delete("pin", id: "p1")
        #expect(await tablet.engine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        try Self.forgetEverything(fixture)

        guard case .ok = await phone.engine.sync() else { Issue.record("the resend did not settle"); return }
        #expect(try fixture.storage.read(user: "alice", kind: "pin", id: "p1") == nil, "still deleted on the server")
        #expect(try await phone.store.record("pin", id: "p1") == nil, "and on the device")
        #expect(try await phone.store.outboxOperations().isEmpty)
    }
}

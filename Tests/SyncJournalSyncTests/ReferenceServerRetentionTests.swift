import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// The reference server with an operation retention follows sync-server's
/// contract (journals/PROTOCOL.md, "Remembered operations").
@Suite("Reference server: remembered operations forgotten after a retention")
struct ReferenceServerRetentionTests {
    static let start: Int64 = 1_764_000_000_000

    @Test("a create whose reply was lost is resent after the server forgot it: read back, acknowledged, applied once")
    func lostReplyAfterRetention() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer(startMilliseconds: Self.start)
        await server.setOperationRetention(OperationRetention(retentionMilliseconds: 10_000))
        // The reference transport itself (it reads rows back), behind one that loses a reply.
        let store = try await openStore(dir.file("a.journal"), clock: Self.start)
        let faulty = FaultInjectingTransport(server.transport(user: "u1"))
        let engine = SyncEngine(store: store, transport: faulty, options: .init(kinds: ["pin"], jitterSeed: 42))
        try await store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        await faulty.inject(.loseReply, on: .push)
        #expect(await engine.sync().isRetryLater)
        await server.tick(9_999)
        #expect(await server.pruneRememberedOperations() == 0, "not yet past the retention")
        await server.tick(20_000)
        #expect(await server.pruneRememberedOperations() == 1)

        #expect(await engine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await server.appliedMutations == 1, "applied exactly once")
        #expect(await server.pushes == 2)
        #expect(try await store.record("pin", id: "p1")?.fields == ["name": .string("Cafe")])
        #expect(try await store.outboxOperations().isEmpty)
    }

    @Test("a create resent after its id was forgotten, queued by a clock far ahead, is known by its record: a conflict with null once the record was deleted")
    func forgottenCreateOfADeletedRecord() async throws {
        let server = ReferenceServer(startMilliseconds: Self.start)
        await server.setOperationRetention(OperationRetention(retentionMilliseconds: 10_000))
        var create = Mutation(operationID: .random(), kind: "pin", op: .create, recordID: "p1", fields: [:], baseUpdatedAt: nil)
        create.queuedAt = Self.start + 1_000_000
        guard case .applied(let row)? = try await server.push(user: "u1", [create]).first?.outcome else {
            Issue.record("the create was not applied")
            return
        }
        let delete = Mutation(operationID: .random(), kind: "pin", op: .delete, recordID: "p1", fields: [:], baseUpdatedAt: row.updatedAt)
        _ = try await server.push(user: "u1", [delete])
        await server.tick(20_000)
        #expect(await server.pruneRememberedOperations() == 2)
        #expect(try await server.push(user: "u1", [create]).map(\.outcome) == [.conflict(server: nil)], "never re-created")
    }

    @Test("without a retention the reference server forgets nothing")
    func noRetention() async throws {
        let server = ReferenceServer(startMilliseconds: Self.start)
        let create = Mutation(operationID: .random(), kind: "pin", op: .create, recordID: "p1", fields: [:], baseUpdatedAt: nil)
        let first = try await server.push(user: "u1", [create])
        await server.tick(1_000_000_000)
        #expect(await server.pruneRememberedOperations() == 0)
        #expect(try await server.push(user: "u1", [create]) == first)
    }
}

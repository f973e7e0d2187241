import SyncJournalProtocol
import Foundation
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// Exactly-once effect over an at-least-once transport: every mutation
/// carries its operation id and the server answers a replay with its first result.
@Suite("Sync engine: lost replies are safe")
struct LostReplyTests {
    @Test("a lost push reply: retry later, the operation stays queued (sent), the resend is applied exactly once and acknowledged")
    func lostReplyThenResendAppliesOnce() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server)
        try await device.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        let operationID = try #require(try await device.store.outboxOperations().first).id
        await device.faulty.inject(.loseReply, on: .push)

        #expect(await device.sync().isRetryLater)
        #expect(await server.appliedMutations == 1, "the server applied it")
        let entry = try #require(try await device.store.outboxOperations().first)
        #expect(entry.id == operationID)
        #expect(entry.sent)
        #expect(entry.attempts == 1)
        #expect(entry.permanentFailures == 0, "a lost reply is transient")
        #expect(await device.store.isInFlight(operationID) == false)
        let firstResult = try #require(await device.recorder.pushReplies.first?.first)

        #expect(await device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await device.recorder.pushBatches.map { $0.map(\.operationID) } == [[operationID], [operationID]])
        #expect(await device.recorder.pushReplies.last?.first == firstResult, "the replay gets the first result")
        #expect(await server.appliedMutations == 1, "applied exactly once")
        #expect(await server.pushes == 2)
        #expect(try await device.store.outboxOperations().isEmpty)
        #expect(try await device.store.record("pin", id: "p1")?.hasPendingChanges == false)
        #expect(await server.rows(user: "u1", kind: "pin").map(\.id) == ["p1"])
    }

    @Test("a lost update reply: the resend does not conflict with the server's own result")
    func lostUpdateReplyResendDoesNotConflict() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server)
        try await device.store.create("pin", id: "p1", fields: ["n": .int(1)])
        #expect(await device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        try await device.store.update("pin", id: "p1", changes: ["n": .int(2)])
        await device.faulty.inject(.loseReply, on: .push)
        #expect(await device.sync().isRetryLater)
        // The server's row moved on (applied) while the device still has the old base:
        // a naive resend would be a conflict; the remembered id returns the first result.
        #expect(await device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(try await device.store.conflicts().isEmpty)
        #expect(await server.appliedMutations == 2)
        #expect(await server.row(kind: "pin", id: "p1")?.fields == ["n": .int(2)])
    }

    @Test("duplicate delivery applies once")
    func duplicateDeliveryAppliesOnce() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server)
        try await device.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        try await device.store.create("pin", id: "p2", fields: ["name": .string("Museum")])
        await device.faulty.inject(.duplicate, on: .push)

        #expect(await device.sync() == .ok(pushed: 2, pulled: 2, conflicts: 0))
        #expect(await server.pushes == 2, "the server received the request twice")
        #expect(await server.appliedMutations == 2, "each operation applied once")
        #expect(try await device.store.outboxOperations().isEmpty)
        #expect(try await device.store.conflicts().isEmpty)
        let replies = await device.recorder.pushReplies
        #expect(replies.count == 2 && replies[0] == replies[1])
    }

    @Test("a lost request (never reached the server) is resent and applied once")
    func lostRequestIsResent() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server)
        try await device.store.create("pin", id: "p1", fields: [:])
        await device.faulty.inject(.loseRequest, on: .push)
        #expect(await device.sync().isRetryLater)
        #expect(await server.pushes == 0)
        #expect(await device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await server.appliedMutations == 1)
    }

    @Test("a lost reply followed by a crash and a resend: the reopened device's operation is acknowledged and applied once")
    func lostReplyThenCrashThenResend() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let path = dir.file("a.journal")
        let device = try await Device.open(path, server: server)
        try await device.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        let operationID = try #require(try await device.store.outboxOperations().first).id
        await device.faulty.inject(.loseReply, on: .push)
        #expect(await device.sync().isRetryLater)
        #expect(await server.appliedMutations == 1)
        // The crash: the store goes away with the operation still queued.
        try await device.store.close()

        let reopened = try await Device.open(path, server: server)
        let entry = try #require(try await reopened.store.outboxOperations().first)
        #expect(entry.id == operationID)
        #expect(entry.sent, "the journal remembers the operation may have reached the server")
        #expect(await reopened.store.isInFlight(operationID) == false, "nothing is in flight after a restart")

        #expect(await reopened.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await reopened.recorder.pushBatches.map { $0.map(\.operationID) } == [[operationID]])
        #expect(await server.appliedMutations == 1, "applied exactly once")
        #expect(try await reopened.store.outboxOperations().isEmpty)
        #expect(try await reopened.store.record("pin", id: "p1")?.serverUpdatedAt == (await server.row(kind: "pin", id: "p1"))?.updatedAt)
        try await reopened.store.close()

        // And it stays acknowledged after another reopen.
        let again = try await openStore(path)
        #expect(try await again.outboxOperations().isEmpty)
        #expect(try await again.record("pin", id: "p1")?.fields == ["name": .string("Cafe")])
        try await again.close()
    }

    @Test("a held push whose reply is lost, then a crash: the resend is applied once")
    func heldPushReplyLostThenCrash() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let path = dir.file("a.journal")
        let device = try await Device.open(path, server: server)
        for index in 0..<3 { try await device.store.create("pin", id: "p\(index)", fields: [:]) }
        await device.faulty.holdNextRequest(.push)
        let sync = Task { await device.sync() }
        await device.faulty.waitUntilHeld()
        await device.faulty.releaseHeld(deliverReply: false)
        #expect(await sync.value.isRetryLater)
        #expect(await server.appliedMutations == 3)
        try await device.store.close()

        let reopened = try await Device.open(path, server: server)
        #expect(await reopened.sync() == .ok(pushed: 3, pulled: 3, conflicts: 0))
        #expect(await server.appliedMutations == 3)
        #expect(try await reopened.store.outboxOperations().isEmpty)
        try await reopened.store.close()
    }
}

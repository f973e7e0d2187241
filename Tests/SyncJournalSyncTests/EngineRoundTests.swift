import SyncJournalProtocol
import Foundation
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// One sync at a time, push before pull, batches and rounds, and bases that
/// move with the device's own writes.
@Suite("Sync engine: one sync at a time, push before pull, batches, bases")
struct EngineRoundTests {
    @Test("one sync at a time: a second sync() while one runs waits and returns the same outcome")
    func secondSyncWaitsAndSharesTheOutcome() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server)
        try await device.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])

        await device.faulty.holdNextRequest(.push)
        let first = Task { await device.sync() }
        await device.faulty.waitUntilHeld()
        // The second caller says it is about to call sync() and then calls
        // it. The first sync cannot end before its held push is released,
        // and after the release it still has to journal the acknowledgement
        // and a pulled page (several fdatasyncs), so the second call arrives
        // while the first one is running.
        let (announced, announce) = AsyncStream.makeStream(of: Void.self)
        let second = Task {
            announce.yield()
            announce.finish()
            return await device.sync()
        }
        for await _ in announced {}
        #expect(await device.faulty.requestCount == 1)
        await device.faulty.releaseHeld()

        let firstOutcome = await first.value
        let secondOutcome = await second.value
        #expect(firstOutcome == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(secondOutcome == firstOutcome)
        #expect(await server.pushes == 1, "the server saw exactly one push request")
        #expect(await server.appliedMutations == 1)
        #expect(await device.faulty.requestCount == 2, "one push and one pull, never a parallel request")
        #expect(await device.recorder.order == ["push", "pull"])
    }

    @Test("a sync after the shared one has finished is a new sync")
    func syncAfterTheSharedOneIsNew() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server)
        try await device.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        #expect(await device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await device.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(await device.recorder.order == ["push", "pull", "pull"])
    }

    @Test("push before pull: with local edits and server changes, the push goes first")
    func pushBeforePull() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server)
        try await device.store.create("pin", id: "mine", fields: ["name": .string("Cafe")])
        await server.write(user: "u1", kind: "pin", id: "theirs", fields: ["name": .string("Tapas bar")])

        #expect(await device.sync() == .ok(pushed: 1, pulled: 2, conflicts: 0))
        #expect(await device.recorder.order == ["push", "pull"])
        #expect(try await device.store.records("pin").map(\.id) == ["mine", "theirs"])
    }

    @Test("push before pull even when the push fails: no pull follows a failed push")
    func failedPushStopsBeforePull() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server)
        try await device.store.create("pin", id: "mine", fields: ["name": .string("Cafe")])
        await server.write(user: "u1", kind: "pin", id: "theirs", fields: ["name": .string("Tapas bar")])
        await device.faulty.inject(.loseRequest, on: .push)

        #expect(await device.sync().isRetryLater, "a lost request is transient: retry later")
        #expect(await device.faulty.requestCount == 1)
        #expect(try await device.store.record("pin", id: "theirs") == nil)
    }

    @Test("batches: pushes go in batches of at most 3, only sent operations are acknowledged, and edits made during a held push go in a later round of the same sync")
    func batchesAcknowledgeOnlyWhatWasSent() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server, batchSize: 3)
        let store = device.store
        for index in 0..<10 {
            try await store.create("pin", id: "r\(index)", fields: ["n": .int(Int64(index))])
        }
        let queued = try await store.outboxOperations().map(\.id)
        #expect(queued.count == 10)

        await device.faulty.holdNextRequest(.push)
        let sync = Task { await device.sync() }
        await device.faulty.waitUntilHeld()
        // The first batch is in flight; nothing else is.
        for (index, id) in queued.enumerated() { #expect(await store.isInFlight(id) == (index < 3)) }
        // Edits during the request: two new records, and an update of a
        // record whose create is in flight (queued behind it, not merged).
        try await store.create("pin", id: "n1", fields: ["n": .int(100)])
        try await store.create("pin", id: "n2", fields: ["n": .int(101)])
        try await store.update("pin", id: "r0", changes: ["edited": .bool(true)])
        #expect(try await store.outboxOperations().count == 13)
        #expect(try await store.outboxOperations().filter { $0.key.id == "r0" }.map(\.operation.kind) == [.create, .update])

        // Hold the second round too, to look at the store between rounds.
        await device.faulty.holdNextRequest(.push)
        await device.faulty.releaseHeld()
        await device.faulty.waitUntilHeld()
        let between = try await store.outboxOperations().map(\.id)
        #expect(between.count == 10)
        #expect(Set(between).isDisjoint(with: queued.prefix(3)), "the three sent operations are acknowledged")
        #expect(Set(queued.dropFirst(3)).isSubset(of: Set(between)), "the seven not sent are still queued")
        #expect(await server.appliedMutations == 3)
        await device.faulty.releaseHeld()

        #expect(await sync.value == .ok(pushed: 13, pulled: 12, conflicts: 0))
        let batches = await device.recorder.pushBatches
        #expect(batches.map(\.count) == [3, 3, 3, 3, 1])
        #expect(batches.allSatisfy { $0.count <= 3 })
        let sentIDs = batches.flatMap { $0.map(\.operationID) }
        #expect(sentIDs.count == Set(sentIDs).count, "each operation sent once")
        #expect(batches.last?.first?.recordID == "r0")
        #expect(batches.last?.first?.op == .update)
        #expect(try await store.outboxOperations().isEmpty, "the sync loops until the outbox is empty")
        #expect(await server.rows(user: "u1", kind: "pin").count == 12)
        #expect(await server.row(kind: "pin", id: "r0")?.fields == ["n": .int(0), "edited": .bool(true)])
        #expect(await server.pushes == 5)
    }

    @Test("bases move with our own writes: a second update queued behind an in-flight one takes the new stamp and applies")
    func basesMoveWithOurOwnWrites() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server)
        let store = device.store
        try await store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        #expect(await device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        let created = try #require(await server.row(kind: "pin", id: "p1"))
        await server.tick(1_000)

        try await store.update("pin", id: "p1", changes: ["name": .string("Café")])
        await device.faulty.holdNextRequest(.push)
        let sync = Task { await device.sync() }
        await device.faulty.waitUntilHeld()
        try await store.update("pin", id: "p1", changes: ["visited": .bool(true)])
        let queued = try await store.outboxOperations()
        #expect(queued.count == 2, "the second update queues behind the one in flight")
        #expect(queued.map(\.operation.baseUpdatedAt) == [created.updatedAt, created.updatedAt])
        await device.faulty.releaseHeld()

        #expect(await sync.value == .ok(pushed: 2, pulled: 1, conflicts: 0))
        let replies = await device.recorder.pushReplies
        let batches = await device.recorder.pushBatches
        #expect(batches.count == 3)
        guard batches.count == 3, replies.count == 3, case .applied(let firstUpdate) = replies[1].first?.outcome else {
            Issue.record("expected three applied pushes, got \(replies)")
            return
        }
        #expect(firstUpdate.updatedAt > created.updatedAt)
        #expect(batches[2].first?.baseUpdatedAt == firstUpdate.updatedAt,
                "the second update's base is the server's stamp of the first")
        #expect(try await store.conflicts().isEmpty)
        #expect(try await store.outboxOperations().isEmpty)
        let final = try #require(await server.row(kind: "pin", id: "p1"))
        #expect(final.fields == ["name": .string("Café"), "visited": .bool(true)])
        #expect(try await store.record("pin", id: "p1")?.fields == final.fields)
        #expect(try await store.record("pin", id: "p1")?.serverUpdatedAt == final.updatedAt)
        #expect(await server.appliedMutations == 3)
    }

    @Test("a delete queued behind an in-flight update takes the update's new stamp and applies")
    func deleteBehindInFlightUpdateTakesNewBase() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server)
        try await device.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        #expect(await device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))

        try await device.store.update("pin", id: "p1", changes: ["name": .string("Café")])
        await device.faulty.holdNextRequest(.push)
        let sync = Task { await device.sync() }
        await device.faulty.waitUntilHeld()
        try await device.store.delete("pin", id: "p1")
        await device.faulty.releaseHeld()

        #expect(await sync.value == .ok(pushed: 2, pulled: 1, conflicts: 0))
        #expect(await server.row(kind: "pin", id: "p1") == nil)
        #expect(try await device.store.record("pin", id: "p1") == nil)
        #expect(try await device.store.outboxOperations().isEmpty)
    }
}

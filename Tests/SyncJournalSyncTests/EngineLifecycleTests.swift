import Foundation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

// An iOS app's lifecycle seen by the engine: a background task with a
// deadline, and suspension. Requests are held and released by hand; time
// moves only with the manual clock.

@Suite("Sync engine: deadlines and suspension")
struct EngineLifecycleTests {
    @Test("a deadline reached mid-push returns at the deadline while the push is still out; a later sync finishes with nothing duplicated or lost")
    func deadlineMidPush() async throws {
        for deliverReply in [true, false] {
            let dir = try TemporaryDirectory(prefix: "engine-lifecycle"); defer { dir.remove() }
            let server = ReferenceServer()
            let clock = ManualClock()
            await clock.advance(toMilliseconds: 0)
            let phone = try await Device.open(dir.file("phone.journal"), server: server, batchSize: 2, syncClock: clock)
            for index in 0..<5 { try await phone.store.create("pin", id: "p\(index)", fields: ["n": .int(Int64(index))]) }
            let queued = Set(try await phone.store.outboxOperations().map(\.id))

            await phone.faulty.holdNextRequest(.push)
            let cut = Task { await phone.engine.sync(before: 1_000) }
            await phone.faulty.waitUntilHeld()
            await clock.advance(toMilliseconds: 999)
            #expect(await phone.faulty.isHolding)
            await clock.advance(toMilliseconds: 1_000)
            #expect(await cut.value == .deadlineReached, "reply \(deliverReply)")
            #expect(await phone.faulty.isHolding, "the answer came while the push was still out")
            // Nothing was half-done: the held operations are still queued, marked sent.
            let outbox = try await phone.store.outboxOperations()
            #expect(Set(outbox.map(\.id)) == queued)
            #expect(outbox.filter(\.sent).count == 2)

            // The cut sync keeps the reply if it comes, and starts nothing more.
            await phone.faulty.releaseHeld(deliverReply: deliverReply)
            await phone.engine.untilSyncEnded()
            #expect(try await phone.store.outboxOperations().count == (deliverReply ? 3 : 5), "reply \(deliverReply)")
            #expect(await phone.recorder.pushBatches.count == 1, "no request after the deadline")
            #expect(await phone.engine.sync() == .ok(pushed: deliverReply ? 3 : 5, pulled: 5, conflicts: 0), "reply \(deliverReply)")
            #expect(try await phone.store.outboxOperations().isEmpty, "reply \(deliverReply)")
            #expect(await server.rows(user: "u1", kind: "pin").map(\.id) == ["p0", "p1", "p2", "p3", "p4"])
            #expect(await server.appliedMutations == 5, "reply \(deliverReply): each operation applied once")
            // Every operation reached the server under its own id only.
            let sentIDs = Set(await phone.recorder.pushBatches.flatMap { $0.map(\.operationID) })
            #expect(sentIDs == queued)
            try await phone.store.close()
        }
    }

    @Test("a deadline reached mid-pull keeps the pages journaled before it; the next sync pulls on from that cursor")
    func deadlineMidPull() async throws {
        let dir = try TemporaryDirectory(prefix: "engine-lifecycle"); defer { dir.remove() }
        let server = ReferenceServer()
        for index in 0..<6 {
            await server.write(user: "u1", kind: "pin", id: "r\(index)", fields: [:])
            await server.tick(10)
        }
        let clock = ManualClock()
        await clock.advance(toMilliseconds: 0)
        let phone = try await Device.open(dir.file("phone.journal"), server: server, pullLimit: 2, syncClock: clock)

        await phone.faulty.holdNextRequest(.pull)
        let cut = Task { await phone.engine.sync(before: 500) }
        await phone.faulty.waitUntilHeld()
        await clock.advance(toMilliseconds: 500)
        #expect(await cut.value == .deadlineReached)
        #expect(try await phone.store.cursor(for: "pin") == nil, "nothing pulled yet")

        // The page that was out arrives and is kept; no further page is asked for.
        await phone.faulty.releaseHeld()
        await phone.engine.untilSyncEnded()
        #expect(try await phone.store.records("pin").map(\.id) == ["r0", "r1"])
        let cursor = try #require(try await phone.store.cursor(for: "pin"))
        #expect(cursor.id == "r1")
        #expect(await phone.recorder.pullRequests.count == 1, "no page asked for after the deadline")

        #expect(await phone.engine.sync() == .ok(pushed: 0, pulled: 4, conflicts: 0))
        #expect(try await phone.store.records("pin").map(\.id) == ["r0", "r1", "r2", "r3", "r4", "r5"])
        let requests = await phone.recorder.pullRequests
        #expect(requests.count == 3)
        #expect(requests[1].cursors["pin"] == .some(cursor), "the next pull starts from the journaled cursor")
        try await phone.store.close()
    }

    @Test("a deadline already past returns at once without a request; a sync that ends first returns its own outcome")
    func deadlineEdges() async throws {
        let dir = try TemporaryDirectory(prefix: "engine-lifecycle"); defer { dir.remove() }
        let server = ReferenceServer()
        let clock = ManualClock()
        await clock.advance(toMilliseconds: 5_000)
        let phone = try await Device.open(dir.file("phone.journal"), server: server, syncClock: clock)
        try await phone.store.create("pin", id: "p", fields: [:])
        #expect(await phone.engine.sync(within: .zero) == .deadlineReached)
        #expect(await phone.faulty.requestCount == 0)
        #expect(await phone.engine.sync(within: .seconds(1)) == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(clock.pendingTimerDeadlineMilliseconds.isEmpty, "the deadline's timer was cancelled")
        try await phone.store.close()
    }

    @Test("suspending mid-push: the engine returns at once, the store hands the operations back, a late reply is not kept, and after resume they go again with their ids")
    func suspendMidPush() async throws {
        for deliverReply in [true, false] {
            let dir = try TemporaryDirectory(prefix: "engine-lifecycle"); defer { dir.remove() }
            let server = ReferenceServer()
            let clock = ManualClock()
            await clock.advance(toMilliseconds: 0)
            let phone = try await Device.open(dir.file("phone.journal"), server: server, syncClock: clock)
            for index in 0..<3 { try await phone.store.create("pin", id: "p\(index)", fields: [:]) }
            let queued = Set(try await phone.store.outboxOperations().map(\.id))

            await phone.faulty.holdNextRequest(.push)
            let running = Task { await phone.engine.sync() }
            await phone.faulty.waitUntilHeld()
            await phone.engine.suspend()
            await phone.store.suspend()
            #expect(await phone.faulty.isHolding, "neither waited for the request")
            #expect(await phone.store.status == .suspended)
            #expect(await phone.engine.sync() == .skipped(.suspended))
            #expect(await phone.engine.sync(before: 10_000) == .skipped(.suspended))

            // The reply lands while the app sleeps: nothing is written.
            await phone.faulty.releaseHeld(deliverReply: deliverReply)
            #expect(await running.value == .skipped(.suspended), "reply \(deliverReply)")

            try await phone.store.resume()
            #expect(await phone.engine.resume() == nil, "not started: nothing scheduled")
            let outbox = try await phone.store.outboxOperations()
            #expect(Set(outbox.map(\.id)) == queued, "still queued after the late reply")
            #expect(outbox.filter(\.sent).count == 3)
            #expect(await phone.engine.sync() == .ok(pushed: 3, pulled: 3, conflicts: 0), "reply \(deliverReply)")
            #expect(try await phone.store.outboxOperations().isEmpty)
            #expect(await server.appliedMutations == 3, "each applied once, resent with the same ids")
            #expect(Set(await phone.recorder.pushBatches.flatMap { $0.map(\.operationID) }) == queued)
            try await phone.store.close()
        }
    }

    @Test("a suspended engine fires no timer and opens no wait; resume syncs at once")
    func suspendedEngineStaysQuiet() async throws {
        let dir = try TemporaryDirectory(prefix: "engine-lifecycle"); defer { dir.remove() }
        let server = ReferenceServer()
        let clock = ManualClock()
        await clock.advance(toMilliseconds: 0)
        let phone = try await Device.open(dir.file("phone.journal"), server: server, syncClock: clock)
        await phone.engine.start()
        try await phone.store.create("pin", id: "p", fields: [:])
        await phone.engine.suspend()
        #expect(await phone.engine.isSuspended)
        let before = await phone.engine.syncsStarted
        await clock.advance(byMilliseconds: 600_000)
        #expect(await phone.engine.syncsStarted == before, "no sync while suspended")
        #expect(await phone.engine.appDidBecomeActive() == nil)
        #expect(await phone.engine.resume() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await !phone.engine.isSuspended)
        await phone.engine.stop()
        try await phone.store.close()
    }
}

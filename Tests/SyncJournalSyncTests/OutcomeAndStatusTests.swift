import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// Awaiting and inspecting: `LocalStore.outcome(of:)` waits until
/// an operation is acknowledged, conflicted, quarantined or cancelled (each
/// staged with held requests, never sleeps), and `outboxStatus()` on the store
/// and on the engine lists every operation's state, attempts, next attempt
/// time and last error.
@Suite("Outcomes and outbox status")
struct OutcomeAndStatusTests {
    /// Starts awaiting the outcome of `id` in a task, and checks that the
    /// await is still suspended after the other tasks had their chance.
    static func startAwaiting(_ id: OperationID, on store: LocalStore,
                              sourceLocation: SourceLocation = #_sourceLocation) async -> (Task<OperationOutcome, Never>, SharedSlot<OperationOutcome>) {
        let result = SharedSlot<OperationOutcome>()
        let task = Task {
            let outcome = await store.outcome(of: id)
            result.set(outcome)
            return outcome
        }
        await letOtherTasksRun(store)
        #expect(result.value == nil, "the await is suspended: the operation has no outcome yet", sourceLocation: sourceLocation)
        return (task, result)
    }

    /// Fails (instead of letting the test hang on an await that can never
    /// end) unless each of `ids` has left the queue or is quarantined: only
    /// then can its outcome be known.
    static func requireSettled(_ ids: [OperationID], on store: LocalStore,
                               sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let waiting = try await store.outboxOperations().filter { ids.contains($0.id) && !$0.quarantined }
        try #require(waiting.isEmpty, "still queued without an outcome: \(waiting.map(\.id))", sourceLocation: sourceLocation)
    }

    // MARK: outcome(of:)

    @Test("outcome(of:) waits while the push is held and returns acknowledged with the server's row once it is released")
    func outcomeAcknowledged() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("device.journal"), server: server)
        try await device.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        let op = try #require(try await device.store.outboxOperations().first).id

        await device.faulty.holdNextRequest(.push)
        let syncing = Task { await device.sync() }
        await device.faulty.waitUntilHeld()
        let (waiter, result) = await Self.startAwaiting(op, on: device.store)
        #expect(await device.store.isInFlight(op))
        #expect(await server.row(kind: "pin", id: "p1") == nil, "the server has not seen it yet")
        await device.faulty.releaseHeld()
        #expect(await syncing.value == .ok(pushed: 1, pulled: 1, conflicts: 0))

        try await Self.requireSettled([op], on: device.store)
        let outcome = await waiter.value
        let row = try #require(await server.row(kind: "pin", id: "p1"))
        #expect(outcome == .acknowledged(row))
        #expect(result.value == outcome)
        #expect(await device.store.outcome(of: op) == .acknowledged(row), "asked afterwards, the outcome is remembered")
        try await device.store.close()
    }

    @Test("outcome(of:) waits while the push is held and returns conflicted with the ConflictRecord; a requeued replacement is awaited in turn")
    func outcomeConflicted() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let scene = try await ConflictScene.make(dir, policies: ["pin": .clientWins])
        await scene.server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs")])
        let op = try await scene.store.update("pin", id: "p1", changes: ["name": .string("Mine")]).operation

        // Both pushes are held: the stale edit, then the change the policy requeued.
        await scene.device.faulty.inject(.hold, on: .push, times: 2)
        let device = scene.device
        let syncing = Task { await device.sync() }
        await device.faulty.waitUntilHeld()
        let (waiter, _) = await Self.startAwaiting(op, on: scene.store)
        await device.faulty.releaseHeld()
        // The reply is kept before the next push starts (or the sync ends).
        let held = await waitUntilHeldOrFinished(device.faulty, syncing)
        try await Self.requireSettled([op], on: scene.store)
        let conflict = try #require(await waiter.value.asConflict)
        #expect(try await scene.store.conflicts() == [conflict])
        #expect(conflict.shape == .bothUpdated && conflict.resolution.strategy == .clientWins)
        let replacement = try #require(conflict.resolution.replacement)

        try #require(held, "the requeued change is being pushed")
        let (replacementWaiter, _) = await Self.startAwaiting(replacement.id, on: scene.store)
        await device.faulty.releaseHeld()
        let synced = await syncing.value
        try await Self.requireSettled([replacement.id], on: scene.store)
        let row = try #require(await replacementWaiter.value.asAcknowledged)
        #expect(await scene.server.row(kind: "pin", id: "p1") == row)
        #expect(row.fields["name"] == .string("Mine"))
        #expect(synced == .ok(pushed: 1, pulled: 1, conflicts: 1))
        try await scene.store.close()
    }

    @Test("outcome(of:) stays suspended through permanent failures below the limit and returns quarantined at the third, with attempts and last error")
    func outcomeQuarantinedAfterPermanentFailures() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let clock = ManualClock()
        let device = try await Device.open(dir.file("device.journal"), server: server, syncClock: clock)
        await server.rejectPermanently(kind: "pin", id: "p1", reason: "422 check constraint")
        try await device.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        let op = try #require(try await device.store.outboxOperations().first).id
        let changes = await device.store.changes()

        await device.faulty.holdNextRequest(.push)
        let syncing = Task { await device.sync() }
        await device.faulty.waitUntilHeld()
        let (waiter, result) = await Self.startAwaiting(op, on: device.store)
        await device.faulty.releaseHeld()
        #expect(await syncing.value == .ok(pushed: 0, pulled: 0, conflicts: 0))
        await letOtherTasksRun(device.store)
        #expect(result.value == nil, "one permanent failure: still waiting")
        #expect(try await device.store.outboxOperations().first?.permanentFailures == 1)

        await clock.advance(byMilliseconds: RetryPolicy().maximumDelayMilliseconds)
        #expect(await device.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        await letOtherTasksRun(device.store)
        #expect(result.value == nil, "two permanent failures: still waiting")

        await clock.advance(byMilliseconds: RetryPolicy().maximumDelayMilliseconds)
        #expect(await device.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        try await Self.requireSettled([op], on: device.store)
        let entry = try #require(await waiter.value.asQuarantined)
        #expect(entry.id == op && entry.state == .quarantined)
        #expect(entry.attempts == 3 && entry.permanentFailures == 3)
        #expect(entry.lastError == "422 check constraint" && entry.lastFailure == .permanent)
        #expect(try await device.store.quarantinedOperations() == [entry])
        #expect(await device.store.outcome(of: op) == .quarantined(entry), "asked afterwards, it is still quarantined")
        try await device.store.close()
        let reported = await drainChanges(changes)
        #expect(reported.filter { if case .quarantined = $0 { return true } else { return false } } == [.quarantined(entry)],
                "changes() reported the quarantine once")
    }

    @Test("outcome(of:) returns quarantined at once for an update that matched no row and no readable row remains (deleted or no access)")
    func outcomeQuarantinedDeletedOrNoAccess() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer(remembersOperationIDs: false)
        await server.write(user: "u1", kind: "pin", id: "p1", fields: ["name": .string("Cafe")])
        // The fault injector wraps the server's transport directly: it forwards single-row reads.
        let store = try await openStore(dir.file("device.journal"))
        let faulty = FaultInjectingTransport(server.transport(user: "u1"))
        let engine = SyncEngine(store: store, transport: faulty, options: .init(kinds: ["pin"], jitterSeed: 1))
        #expect(await engine.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        await server.tick(10)
        await server.delete(kind: "pin", id: "p1")
        let op = try await store.update("pin", id: "p1", changes: ["name": .string("Mine")]).operation

        await faulty.holdNextRequest(.push)
        let syncing = Task { await engine.sync() }
        await faulty.waitUntilHeld()
        let (waiter, _) = await Self.startAwaiting(op, on: store)
        await faulty.releaseHeld()
        _ = await syncing.value
        #expect(await server.reads == 1, "the update that matched nothing was read back")
        try await Self.requireSettled([op], on: store)
        let entry = try #require(await waiter.value.asQuarantined)
        #expect(entry.id == op && entry.state == .quarantined)
        #expect(entry.attempts == 1, "quarantined at the first failure")
        #expect(entry.lastFailure == .deletedOrNoAccess)
        #expect(entry.lastError?.contains("deleted or no access") == true)
        #expect(try await store.record("pin", id: "p1") == nil, "the device stops showing the row")
        #expect(try await store.conflicts().isEmpty)
        try await store.close()
    }

    @Test("outcome after compaction: two queued updates coalesce into the first; awaiting either id returns the one acknowledgement")
    func outcomeFollowsCoalescedUpdates() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let scene = try await ConflictScene.make(dir)
        let first = try await scene.store.update("pin", id: "p1", changes: ["name": .string("One")]).operation
        let second = try await scene.store.update("pin", id: "p1", changes: ["rating": .int(5)]).operation
        let queued = try await scene.store.outboxOperations()
        #expect(queued.map(\.id) == [first], "the second update was merged into the first")
        #expect(queued.first?.operation.fields == ["name": .string("One"), "rating": .int(5)])

        await scene.device.faulty.holdNextRequest(.push)
        let device = scene.device
        let syncing = Task { await device.sync() }
        await device.faulty.waitUntilHeld()
        let (firstWaiter, _) = await Self.startAwaiting(first, on: scene.store)
        let (secondWaiter, _) = await Self.startAwaiting(second, on: scene.store)
        await device.faulty.releaseHeld()
        let synced = await syncing.value
        try await Self.requireSettled([first, second], on: scene.store)

        let firstOutcome = await firstWaiter.value
        let secondOutcome = await secondWaiter.value
        let row = try #require(await scene.server.row(kind: "pin", id: "p1"))
        #expect(firstOutcome == .acknowledged(row))
        #expect(secondOutcome == .acknowledged(row), "the coalesced id reports the surviving operation's outcome")
        #expect(row.fields == ["name": .string("One"), "rating": .int(5), "tags": .stringSet(["food"])])
        #expect(synced == .ok(pushed: 1, pulled: 1, conflicts: 0))
        try await scene.store.close()
    }

    @Test("outcome after compaction: an update merged into an unsent create reports the create's outcome; a create and delete that cancel out report cancelled")
    func outcomeFollowsCreateCompaction() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("device.journal"), server: server)

        try await device.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        let create = try #require(try await device.store.outboxOperations().first).id
        let update = try await device.store.update("pin", id: "p1", changes: ["rating": .int(5)]).operation
        #expect(try await device.store.outboxOperations().map(\.id) == [create])

        try await device.store.create("pin", id: "p2", fields: ["name": .string("Gone soon")])
        let doomed = try #require(try await device.store.pendingOperations(kind: "pin", id: "p2").first).id
        let (doomedWaiter, _) = await Self.startAwaiting(doomed, on: device.store)
        let delete = try await device.store.delete("pin", id: "p2").operation
        try await Self.requireSettled([doomed, delete], on: device.store)
        #expect(await doomedWaiter.value == .cancelled, "a waiting caller learns the create never needs sending")
        #expect(await device.store.outcome(of: delete) == .cancelled)

        let (updateWaiter, _) = await Self.startAwaiting(update, on: device.store)
        #expect(await device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        let row = try #require(await server.row(kind: "pin", id: "p1"))
        #expect(row.fields == ["name": .string("Cafe"), "rating": .int(5)])
        try await Self.requireSettled([create], on: device.store)
        #expect(await updateWaiter.value == .acknowledged(row))
        #expect(await device.store.outcome(of: create) == .acknowledged(row))
        #expect(await server.row(kind: "pin", id: "p2") == nil)
        try await device.store.close()
    }

    @Test("outcome(of:) returns unknown for an id never queued, and a wait ends with unknown when the store closes")
    func outcomeUnknown() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        #expect(await store.outcome(of: .random()) == .unknown)
        try await store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        let op = try #require(try await store.outboxOperations().first).id
        let (waiter, _) = await Self.startAwaiting(op, on: store)
        try await store.close()
        #expect(await waiter.value == .unknown)
    }

    // MARK: outboxStatus()

    @Test("outboxStatus on the store and the engine: quarantined, sent after a failure, queued, and in flight while a push is held, with attempts, last errors and next attempt times")
    func outboxStatusListsEveryState() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let clock = ManualClock()
        await clock.advance(toMilliseconds: 10_000)
        let policy = RetryPolicy(baseDelay: .milliseconds(1_000), maximumDelay: .milliseconds(60_000))
        var device = try await Device.open(dir.file("device.journal"), server: server, syncClock: clock,
                                           retryPolicy: policy, maximumPermanentFailures: 1)
        await server.rejectPermanently(kind: "pin", id: "bad", reason: "422 check constraint")
        await server.failTransiently(kind: "pin", id: "flaky", reason: "lock timeout", times: 1)
        try await device.store.create("pin", id: "bad", fields: ["name": .string("Bad")])
        try await device.store.create("pin", id: "flaky", fields: ["name": .string("Flaky")])
        #expect(await device.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        try await device.store.create("pin", id: "fresh", fields: ["name": .string("Fresh")])

        var status = try await device.store.outboxStatus()
        #expect(status.map(\.operation.recordID) == ["bad", "flaky", "fresh"], "queue order")
        #expect(status.map(\.state) == [.quarantined, .sent, .queued])
        #expect(status.map(\.attempts) == [1, 1, 0])
        #expect(status.map(\.permanentFailures) == [1, 0, 0])
        #expect(status.map(\.lastError) == ["422 check constraint", "lock timeout", nil])
        #expect(status.map(\.lastFailure) == [.permanent, .transient, nil])
        #expect(status.allSatisfy { $0.nextAttemptIn == nil }, "the journal alone does not know next attempt times")

        // The engine adds its own retry times: the failed operation waits out its backoff.
        var engineStatus = try await device.engine.outboxStatus()
        #expect(engineStatus.map(\.state) == status.map(\.state))
        let flakyWait = try #require(engineStatus[1].nextAttemptIn)
        #expect(flakyWait > .zero && flakyWait <= .milliseconds(policy.backoffBound(afterFailures: 1)))
        #expect(engineStatus[0].nextAttemptIn == nil, "quarantined: never tried until the app decides")
        #expect(engineStatus[2].nextAttemptIn == nil, "not scheduled: the engine was not started")

        // Past the backoff, a sync hands flaky and fresh over; the push is held.
        await clock.advance(by: flakyWait)
        await device.faulty.holdNextRequest(.push)
        let engine = device.engine
        let syncing = Task { await engine.sync() }
        await device.faulty.waitUntilHeld()
        status = try await device.store.outboxStatus()
        #expect(status.map(\.state) == [.quarantined, .inFlight, .inFlight])
        engineStatus = try await device.engine.outboxStatus()
        #expect(engineStatus.map(\.state) == [.quarantined, .inFlight, .inFlight])
        #expect(engineStatus.allSatisfy { $0.nextAttemptIn == nil }, "nothing in flight or quarantined has a next attempt")
        await device.faulty.releaseHeld()
        #expect(await syncing.value == .ok(pushed: 2, pulled: 2, conflicts: 0))

        status = try await device.store.outboxStatus()
        #expect(status.map(\.operation.recordID) == ["bad"])
        #expect(status.first?.state == .quarantined)

        // States, attempts and last errors are journaled; in-flight marks and retry times are not.
        let before = status
        try await device.store.close()
        device = try await Device.open(device.path, server: server, syncClock: clock, retryPolicy: policy, maximumPermanentFailures: 1)
        #expect(try await device.store.outboxStatus() == before)
        try await device.store.close()
    }

    @Test("engine outboxStatus with the scheduler running: a queued edit shows the coalesced attempt time, a failed push shows the retry-after")
    func engineOutboxStatusFollowsScheduler() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let clock = ManualClock()
        await clock.advance(toMilliseconds: 1_000)
        let policy = RetryPolicy(baseDelay: .milliseconds(1_000), maximumDelay: .milliseconds(60_000), editCoalescing: .milliseconds(500))
        let device = try await Device.open(dir.file("device.journal"), server: server, syncClock: clock, retryPolicy: policy)
        await device.engine.start()

        try await device.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        var status = try await device.engine.outboxStatus()
        #expect(status.count == 1)
        #expect(status.first?.state == .queued && status.first?.attempts == 0)
        #expect(status.first?.nextAttemptIn == .milliseconds(500), "the edit's coalesced attempt, half a second from now")
        #expect(await device.engine.nextAttemptAtMilliseconds == 1_500)

        // The scheduled attempt meets a 503 with a retry-after of 30 s.
        await device.faulty.inject(.transient(reason: "503 service unavailable", retryAfter: .milliseconds(30_000)), on: .push)
        await clock.advance(toMilliseconds: 1_500)
        #expect(await device.engine.syncsStarted == 1)
        status = try await device.engine.outboxStatus()
        let entry = try #require(status.first)
        #expect(entry.state == .sent)
        #expect(entry.attempts == 1 && entry.permanentFailures == 0)
        #expect(entry.lastError == "503 service unavailable" && entry.lastFailure == .transient)
        let wait = try #require(entry.nextAttemptIn)
        #expect(wait >= .seconds(30), "never before the server's retry-after")
        #expect(wait == (await device.engine.nextAttemptIn))
        let next = try #require(await device.engine.nextAttemptAtMilliseconds)
        #expect(next == clock.elapsedMilliseconds + wait.wholeMilliseconds)

        // When the backoff ends, the scheduled attempt empties the outbox.
        await clock.advance(by: wait)
        #expect(await device.engine.syncsStarted == 2)
        #expect(try await device.engine.outboxStatus().isEmpty)
        #expect(await server.row(kind: "pin", id: "p1") != nil)
        await device.engine.stop()
        try await device.store.close()
    }
}

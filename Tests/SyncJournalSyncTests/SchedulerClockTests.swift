import SyncJournalProtocol
import Foundation
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// The scheduler's promise kept by the real engine, on a virtual clock
/// (SyncScheduleTests checks the pure state machine): while something can be
/// sent and the device is online an attempt is scheduled, soon after an edit
/// (bursts coalesce), at once when connectivity returns, when a backoff ends,
/// and never sooner than the backoff allows.
@Suite("Scheduler on a virtual clock: offline, backoff, retry-after, no storm, coalescing, never stalls")
struct SchedulerClockTests {
    static let policy = RetryPolicy(baseDelay: .milliseconds(1_000), maximumDelay: .milliseconds(16_000), editCoalescing: .milliseconds(500))

    static func settings(_ policy: RetryPolicy = Self.policy, seed: UInt64 = 7) -> FailureRig.Settings {
        var settings = FailureRig.Settings()
        settings.retryPolicy = policy
        settings.jitterSeed = seed
        return settings
    }

    // MARK: An edit's own path

    @Test("an edit returns with its attempt already on the clock, set from the store's thread: a burst of edits leaves one timer, at the first edit's coalescing deadline")
    func editSchedulesBeforeReturning() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server, settings: Self.settings())
        #expect(rig.clock.pendingTimerDeadlineMilliseconds.isEmpty, "nothing queued, nothing scheduled")
        let start = rig.clock.elapsedMilliseconds
        try await rig.store.create("pin", id: "p0", fields: [:])
        // Read from the clock, not the engine: no engine task ran between the edit and this line.
        #expect(rig.clock.pendingTimerDeadlineMilliseconds == [start + 500])
        for index in 1..<20 { try await rig.store.create("pin", id: "p\(index)", fields: [:]) }
        #expect(rig.clock.pendingTimerDeadlineMilliseconds == [start + 500], "later edits of the burst ride along")
        await rig.clock.advance(byMilliseconds: 500)
        #expect(await rig.engine.syncsStarted == 1)
        #expect(try await rig.store.outboxOperations().isEmpty)
        #expect(await server.pushes == 1)
    }

    // MARK: Offline and online

    @Test("an edit made while the app reports offline brings no attempt; reporting online brings one at once and the outbox empties")
    func editWhileOfflineSyncsWhenOnline() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server, settings: Self.settings(), online: false)
        try await rig.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        #expect(await rig.engine.nextAttemptAtMilliseconds == nil)
        #expect(rig.clock.pendingTimerDeadlineMilliseconds.isEmpty)
        await rig.clock.advance(byMilliseconds: 3_600_000)
        #expect(await rig.engine.syncsStarted == 0, "no attempt in an hour offline")
        #expect(await server.pushes == 0)

        await rig.engine.setOnline(true)
        #expect(await rig.engine.nextAttemptAtMilliseconds == rig.clock.elapsedMilliseconds, "at once")
        await rig.clock.advance(byMilliseconds: 0)
        #expect(await rig.engine.syncsStarted == 1)
        #expect(try await rig.store.outboxOperations().isEmpty)
        #expect(await server.row(kind: "pin", id: "p1")?.fields == ["name": .string("Cafe")])
        #expect(await rig.engine.nextAttemptAtMilliseconds == nil)
    }

    @Test("going offline cancels the scheduled attempt; coming back during a backoff waits for the backoff to end")
    func offlineCancelsAndOnlineRespectsBackoff() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server, settings: Self.settings())
        try await rig.store.create("pin", id: "p1", fields: [:])
        #expect(await rig.engine.nextAttemptAtMilliseconds != nil)
        await rig.engine.setOnline(false)
        #expect(await rig.engine.nextAttemptAtMilliseconds == nil)
        await rig.clock.advance(byMilliseconds: 60_000)
        #expect(await rig.engine.syncsStarted == 0)

        // Online again, then a 503 with a long retry-after.
        await rig.faulty.inject(.transient(reason: "503", retryAfter: .milliseconds(20_000)), on: .push)
        await rig.engine.setOnline(true)
        await rig.clock.advance(byMilliseconds: 0)
        #expect(await rig.engine.syncsStarted == 1)
        let failedAt = rig.clock.elapsedMilliseconds
        let backoffEnds = try #require(await rig.engine.scheduleState.backoffUntil)
        #expect(backoffEnds >= failedAt + 20_000)
        // Offline and online again in the middle of the backoff: not at once.
        await rig.clock.advance(byMilliseconds: 5_000)
        await rig.engine.setOnline(false)
        await rig.engine.setOnline(true)
        #expect(await rig.engine.nextAttemptAtMilliseconds == backoffEnds)
        await rig.clock.advance(toMilliseconds: backoffEnds - 1)
        #expect(await rig.engine.syncsStarted == 1)
        await rig.clock.advance(toMilliseconds: backoffEnds)
        #expect(await rig.engine.syncsStarted == 2)
        #expect(try await rig.store.outboxOperations().isEmpty)
    }

    @Test("a sync that finds no connection while the app still reports online leaves an offline probe scheduled, and a later edit brings it forward")
    func transportOfflineDoesNotStallTheQueue() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server, settings: Self.settings())
        await rig.faulty.inject(.offline, on: .push)
        try await rig.store.create("pin", id: "p1", fields: [:])
        await rig.clock.advance(byMilliseconds: Self.policy.editCoalescingMilliseconds)
        #expect(await rig.engine.syncsStarted == 1)
        #expect(try await rig.store.outboxOperations().count == 1, "skipped: still queued")
        // The app never reported the device offline: the engine looks again by itself.
        try await rig.expectAttemptScheduled()
        #expect(await rig.engine.nextAttemptAtMilliseconds == rig.clock.elapsedMilliseconds + Self.policy.offlineProbeMilliseconds)
        #expect(await rig.engine.scheduleState.consecutiveFailures == 0, "offline is not a failure")
        try await rig.store.create("pin", id: "p2", fields: [:])
        #expect(await rig.engine.nextAttemptAtMilliseconds == rig.clock.elapsedMilliseconds + Self.policy.editCoalescingMilliseconds)
        await rig.clock.advance(byMilliseconds: Self.policy.editCoalescingMilliseconds)
        #expect(await rig.engine.syncsStarted == 2)
        #expect(try await rig.store.outboxOperations().isEmpty, "the queue drained without the app reporting connectivity")
    }

    @Test("with the transport offline and no edits, the engine probes once per offline-probe interval: no storm, no growth")
    func transportOfflineProbesAtAFixedInterval() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server, settings: Self.settings())
        await rig.faulty.inject(.offline, on: .push, times: 10)
        try await rig.store.create("pin", id: "p1", fields: [:])
        await rig.clock.advance(byMilliseconds: Self.policy.editCoalescingMilliseconds)
        for probe in 1...10 {
            #expect(await rig.engine.syncsStarted == probe)
            let next = try #require(await rig.engine.nextAttemptAtMilliseconds)
            #expect(next == rig.clock.elapsedMilliseconds + Self.policy.offlineProbeMilliseconds)
            await rig.clock.advance(toMilliseconds: next - 1)
            #expect(await rig.engine.syncsStarted == probe, "nothing before the probe")
            await rig.clock.advance(toMilliseconds: next)
        }
        #expect(await rig.engine.syncsStarted == 11)
        #expect(try await rig.store.outboxOperations().isEmpty)
    }

    // MARK: Backoff

    /// Push times under `failures` transient failures followed by recovery.
    static func attemptTimes(seed: UInt64, failures: Int, in dir: TemporaryDirectory) async throws -> [Int64] {
        let server = ReferenceServer()
        let rig = try await FailureRig.open(dir.file("seed\(seed)-\(UUID().uuidString).journal"), server: server, settings: Self.settings(seed: seed))
        await rig.faulty.inject(.transient(reason: "503", retryAfter: nil), on: .push, times: failures)
        try await rig.store.create("pin", id: "p1", fields: [:])
        for _ in 0...failures {
            try await rig.expectAttemptScheduled()
            try #require(await rig.advanceToNextAttempt())
        }
        #expect(try await rig.store.outboxOperations().isEmpty)
        #expect(await rig.engine.syncsStarted == failures + 1)
        return await rig.log.pushTimes
    }

    @Test("transient failures back off exponentially with full jitter: each gap is within the doubling bound, never above the cap, the gaps grow, and the same seed repeats the same times")
    func backoffGrowsWithinBoundsAndCap() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let failures = 25
        let times = try await Self.attemptTimes(seed: 7, failures: failures, in: dir)
        try #require(times.count == failures + 1)
        let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
        for (index, gap) in gaps.enumerated() {
            let bound = Self.policy.backoffBound(afterFailures: index + 1)
            #expect(gap >= 0 && gap <= bound, "gap \(gap) after failure \(index + 1) exceeds its bound \(bound)")
            #expect(gap <= Self.policy.maximumDelayMilliseconds)
        }
        // Growth: the first two gaps are bounded by 1 s and 2 s; the backoff
        // later reaches far beyond that (and stays under the 16 s cap).
        #expect(gaps.prefix(2).allSatisfy { $0 <= 2_000 })
        #expect(gaps.dropFirst(5).max()! > Self.policy.backoffBound(afterFailures: 3))
        let early = gaps.prefix(3).reduce(0, +) / 3
        let late = gaps.suffix(10).reduce(0, +) / 10
        #expect(late > early, "later gaps are longer on average")

        // Seeded: the same seed repeats the schedule exactly; another seed does not.
        #expect(try await Self.attemptTimes(seed: 7, failures: failures, in: dir) == times)
        #expect(try await Self.attemptTimes(seed: 8, failures: failures, in: dir) != times)
    }

    @Test("a server's retry-after is honoured: no attempt before it, not even for an edit or a reconnect, and one right when it ends")
    func retryAfterIsHonoured() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let policy = RetryPolicy(baseDelay: .milliseconds(100), maximumDelay: .milliseconds(1_000), editCoalescing: .milliseconds(500))
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server, settings: Self.settings(policy))
        await rig.faulty.inject(.transient(reason: "429 too many requests", retryAfter: .milliseconds(30_000)), on: .push)
        try await rig.store.create("pin", id: "p1", fields: [:])
        await rig.clock.advance(byMilliseconds: 500)
        #expect(await rig.engine.syncsStarted == 1)
        let failedAt = rig.clock.elapsedMilliseconds
        // The jittered backoff (at most 100 ms) is shorter: the retry-after decides.
        #expect(await rig.engine.nextAttemptAtMilliseconds == failedAt + 30_000)

        await rig.clock.advance(byMilliseconds: 1_000)
        try await rig.store.create("pin", id: "p2", fields: [:])
        await rig.engine.setOnline(false)
        await rig.engine.setOnline(true)
        try await rig.expectAttemptScheduled()
        await rig.clock.advance(toMilliseconds: failedAt + 30_000 - 1)
        #expect(await rig.engine.syncsStarted == 1, "no attempt inside the retry-after")
        #expect(await server.pushes == 0)
        await rig.clock.advance(toMilliseconds: failedAt + 30_000)
        #expect(await rig.engine.syncsStarted == 2)
        #expect(await rig.log.pushTimes.last == failedAt + 30_000)
        #expect(try await rig.store.outboxOperations().isEmpty)
    }

    @Test("no attempt storm: an hour of continuous failures with an edit every 10 s makes only the attempts the backoff allows")
    func noAttemptStormOverAnHour() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let clock = ManualClock(maximumFiringsPerAdvance: 10_000)
        let policy = RetryPolicy()  // 1 s base, 5 min cap
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server, clock: clock, settings: Self.settings(policy))
        await rig.faulty.inject(.transient(reason: "503", retryAfter: nil), on: .push, times: 100_000)
        let hour: Int64 = 3_600_000
        var edits = 0
        while clock.elapsedMilliseconds < hour {
            try await rig.store.create("pin", id: "e\(edits)", fields: [:])
            edits += 1
            let fired = await clock.advance(byMilliseconds: 10_000)
            #expect(fired <= 10, "timers fired in 10 s: \(fired)")
            try await rig.expectAttemptScheduled()
        }
        let syncs = await rig.engine.syncsStarted
        let attempts = await rig.log.pushes
        #expect(attempts.count == syncs, "every sync failed on its first push")
        // Expected about 30 (1+2+4+…+256 s, then one per 0–5 min); an attempt
        // per edit would be 360, one per coalescing window 7,200.
        #expect(syncs >= 10 && syncs <= 60, "\(syncs) attempts in an hour")
        #expect(clock.firedTimers <= syncs + 1, "no timer fires without an attempt")
        for attempt in attempts {
            if let until = attempt.backoffUntil { #expect(attempt.at >= until, "attempt at \(attempt.at) inside the backoff until \(until)") }
        }
        let failures = await rig.engine.scheduleState.consecutiveFailures
        #expect(failures == syncs)
        for entry in try await rig.store.outboxOperations() { #expect(entry.permanentFailures == 0 && !entry.quarantined) }

        // The storm ends: the next attempt empties the outbox.
        await rig.faulty.clearFaults()
        try #require(await rig.advanceToNextAttempt())
        #expect(try await rig.store.outboxOperations().isEmpty)
        #expect(await server.appliedMutations == edits)
    }

    // MARK: Coalescing

    @Test("a burst of 50 edits within the coalescing window goes out in one attempt, scheduled by the first edit and not postponed")
    func burstOfEditsIsCoalesced() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server, settings: Self.settings())
        let start = rig.clock.elapsedMilliseconds
        for index in 0..<50 {
            try await rig.store.create("pin", id: "p\(index)", fields: ["n": .int(Int64(index))])
            #expect(await rig.engine.nextAttemptAtMilliseconds == start + Self.policy.editCoalescingMilliseconds)
            await rig.clock.advance(byMilliseconds: 5)
        }
        #expect(await rig.engine.syncsStarted == 0)
        await rig.clock.advance(toMilliseconds: start + Self.policy.editCoalescingMilliseconds)
        #expect(await rig.engine.syncsStarted == 1)
        #expect(await server.acceptedPushSizes == [50])
        #expect(try await rig.store.outboxOperations().isEmpty)
        #expect(await rig.engine.nextAttemptAtMilliseconds == nil)
    }

    // MARK: Never stalls

    @Test("while something can be sent and the device is online, an attempt is always scheduled after every step: edits, 503s, lost replies, per-record failures, offline spells")
    func neverStallsThroughAMixedHistory() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server, settings: Self.settings())
        await server.failTransiently(kind: "pin", id: "b", reason: "lock timeout", times: 3)
        await server.rejectPermanently(kind: "pin", id: "c")
        await server.failTransiently(kind: "pin", id: "d", reason: "busy", times: 2, retryAfter: .milliseconds(4_000))
        await rig.faulty.inject(.transient(reason: "503", retryAfter: nil), on: .push, times: 3)
        await rig.faulty.inject(.loseReply, on: .push)
        await rig.faulty.inject(.transient(reason: "502", retryAfter: .milliseconds(3_000)), on: .pull)

        var online = true
        for step in 0..<200 {
            switch step {
            case 0: for id in ["a", "b", "c", "d"] { try await rig.store.create("pin", id: id, fields: ["n": .int(0)]) }
            case 5: try await rig.store.create("pin", id: "e", fields: [:])
            case 8: online = false; await rig.engine.setOnline(false)
            case 10: try await rig.store.create("pin", id: "f", fields: [:])
            case 12: online = true; await rig.engine.setOnline(true)
            case 15: if try await rig.store.record("pin", id: "a") != nil { try await rig.store.update("pin", id: "a", changes: ["n": .int(1)]) }
            case 20:
                await rig.faulty.inject(.transient(reason: "503", retryAfter: .milliseconds(10_000)), on: .push, times: 2)
                try await rig.store.update("pin", id: "e", changes: ["n": .int(2)])
            default: break
            }
            try await rig.expectAttemptScheduled(online: online, "step \(step)")
            // Move to the next attempt (or a little, when nothing is due).
            if online, let next = await rig.engine.nextAttemptAtMilliseconds {
                await rig.clock.advance(toMilliseconds: max(next, rig.clock.elapsedMilliseconds))
            } else {
                await rig.clock.advance(byMilliseconds: 1_000)
            }
            try await rig.expectAttemptScheduled(online: online, "after step \(step)")
            if step > 25, try await rig.sendableOperations().isEmpty { break }
        }
        #expect(try await rig.sendableOperations().isEmpty, "everything that can be sent was sent")
        #expect(try await rig.store.quarantinedOperations().map(\.key.id) == ["c"])
        #expect(await server.rows(user: "u1", kind: "pin").map(\.id) == ["a", "b", "d", "e", "f"])
        #expect(await server.row(kind: "pin", id: "a")?.fields == ["n": .int(1)])
        #expect(await server.row(kind: "pin", id: "e")?.fields == ["n": .int(2)])
        #expect(await rig.faulty.pendingFaults == 0, "every injected fault was met")
        #expect(await rig.engine.nextAttemptAtMilliseconds == nil)
        for attempt in await rig.log.pushes {
            if let until = attempt.backoffUntil { #expect(attempt.at >= until) }
        }
    }

    // MARK: Reset

    @Test("success resets the backoff: after five failures and a success the next edit goes out after the coalescing delay, and a new failure starts again from the base delay")
    func successResetsTheBackoff() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server, settings: Self.settings())
        await rig.faulty.inject(.transient(reason: "503", retryAfter: nil), on: .push, times: 5)
        try await rig.store.create("pin", id: "p1", fields: [:])
        for _ in 0..<5 { try #require(await rig.advanceToNextAttempt()) }
        #expect(await rig.engine.scheduleState.consecutiveFailures == 5)
        #expect(await rig.engine.scheduleState.backoffUntil != nil)
        try #require(await rig.advanceToNextAttempt())
        #expect(try await rig.store.outboxOperations().isEmpty)
        #expect(await rig.engine.scheduleState.consecutiveFailures == 0)
        #expect(await rig.engine.scheduleState.backoffUntil == nil)

        try await rig.store.update("pin", id: "p1", changes: ["n": .int(1)])
        let editedAt = rig.clock.elapsedMilliseconds
        #expect(await rig.engine.nextAttemptAtMilliseconds == editedAt + Self.policy.editCoalescingMilliseconds)
        await rig.faulty.inject(.transient(reason: "503", retryAfter: nil), on: .push)
        try #require(await rig.advanceToNextAttempt())
        #expect(await rig.engine.scheduleState.consecutiveFailures == 1)
        let failedAt = rig.clock.elapsedMilliseconds
        let next = try #require(await rig.engine.nextAttemptAtMilliseconds)
        #expect(next - failedAt <= Self.policy.backoffBound(afterFailures: 1), "the backoff starts again from the base")
        await rig.clock.advance(toMilliseconds: next)
        #expect(try await rig.store.outboxOperations().isEmpty)
    }
}

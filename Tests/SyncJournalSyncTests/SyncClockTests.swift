import Foundation
import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// The one clock of the API: `ManualClock` behaves as a standard `Clock`
/// that only a test moves, `ContinuousClock` is the real one, and the
/// engine's times read as waits and dates an app can show.
@Suite("Sync clocks: the manual clock as a Clock, the real clock, times the engine reports")
struct SyncClockTests {
    @Test("a sleep on the manual clock resumes only once the clock is advanced to its deadline")
    func manualSleepResumesAtDeadline() async throws {
        let clock = ManualClock()
        let woke = Mutex(false)
        let sleeper = Task {
            try await clock.sleep(for: .seconds(5))
            woke.withLock { $0 = true }
        }
        // The sleep is registered once it shows among the pending deadlines.
        while clock.pendingTimerDeadlines.isEmpty { await Task.yield() }
        #expect(clock.pendingTimerDeadlines == [clock.now.advanced(by: .seconds(5))])
        await clock.advance(by: .milliseconds(4_999))
        for _ in 0..<100 { await Task.yield() }
        #expect(!woke.withLock { $0 }, "not woken before the deadline")
        await clock.advance(by: .milliseconds(1))
        try await sleeper.value
        #expect(woke.withLock { $0 })
        #expect(clock.pendingTimerDeadlines.isEmpty)
    }

    @Test("a sleep whose deadline has passed returns at once, without the clock moving")
    func manualSleepPastDeadline() async throws {
        let clock = ManualClock()
        await clock.advance(by: .seconds(1))
        try await clock.sleep(until: clock.now.advanced(by: .seconds(-1)), tolerance: nil)
        try await clock.sleep(for: .zero)
        #expect(clock.firedTimers == 0)
    }

    @Test("a cancelled sleep on the manual clock throws CancellationError and leaves no timer behind")
    func manualSleepCancelled() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
        while clock.pendingTimerDeadlines.isEmpty { await Task.yield() }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.pendingTimerDeadlines.isEmpty, "the cancelled sleep's timer is removed")

        // Cancelled before it even started: it throws at once.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(60))
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(clock.pendingTimerDeadlines.isEmpty)
    }

    @Test("timers fire in deadline order, each awaited to its end before the next and before advance returns")
    func manualTimersInOrderAndAwaited() async {
        let clock = ManualClock()
        let start = clock.now
        let log = Mutex<[String]>([])
        _ = clock.schedule(at: start.advanced(by: .milliseconds(300))) {
            log.withLock { $0.append("C at \(start.duration(to: clock.now))") }
        }
        _ = clock.schedule(at: start.advanced(by: .milliseconds(100))) {
            // Work that suspends: the next timer still waits for it.
            for _ in 0..<50 { await Task.yield() }
            log.withLock { $0.append("A at \(start.duration(to: clock.now))") }
            _ = clock.schedule(at: start.advanced(by: .milliseconds(200))) {
                log.withLock { $0.append("B at \(start.duration(to: clock.now))") }
            }
        }
        let cancel = clock.schedule(at: start.advanced(by: .milliseconds(150))) { log.withLock { $0.append("cancelled") } }
        cancel()
        let fired = await clock.advance(by: .seconds(1))
        #expect(fired == 3)
        #expect(log.withLock { $0 } == ["A at 0.1 seconds", "B at 0.2 seconds", "C at 0.3 seconds"])
        #expect(start.duration(to: clock.now) == .seconds(1))
    }

    @Test("the manual clock's wall time is its start date plus the virtual time elapsed")
    func manualWallTime() async {
        let clock = ManualClock(wallTimeAtStart: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(clock.wallTime == Date(timeIntervalSince1970: 1_800_000_000))
        await clock.advance(by: .milliseconds(90_250))
        #expect(clock.wallTime == Date(timeIntervalSince1970: 1_800_000_090.25))
        #expect(clock.wallTimeMilliseconds == 1_800_000_090_250)
    }

    @Test("the real clock: its wall time is the machine's date, its instants never go back, and a timer already due fires")
    func continuousClock() async {
        let clock = ContinuousClock()
        let before = Date()
        let wall = clock.wallTime
        let after = Date()
        #expect(before <= wall && wall <= after)
        let first = clock.now
        let second = clock.now
        #expect(first <= second, "monotonic")
        await withCheckedContinuation { (fired: CheckedContinuation<Void, Never>) in
            _ = clock.schedule(at: first) { fired.resume() }
        }
    }

    @Test("after a failed attempt the engine reports the backoff as a wait that shrinks as time passes, and the store stamps edits with the clock's wall time")
    func nextAttemptInAfterBackoff() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-clock-tests"); defer { dir.remove() }
        let clock = ManualClock()
        let device = try await Device.open(dir.file("device.journal"), server: ReferenceServer(), clock: clock, syncClock: clock,
                                           retryPolicy: RetryPolicy(baseDelay: .seconds(1), maximumDelay: .seconds(16),
                                                                    editCoalescing: .milliseconds(500)))
        #expect(await device.engine.nextAttemptIn == nil, "not started: nothing scheduled")
        await device.engine.start()
        await clock.advance(by: .seconds(10))
        try await device.store.create("pin", id: "p1", fields: [:])
        let queued = try #require(try await device.store.outboxOperations().first)
        #expect(queued.operation.queuedAt == 1_764_000_010_000, "stamped with the clock's wall time")
        #expect(await device.engine.nextAttemptIn == .milliseconds(500), "the edit's coalesced attempt")

        await device.faulty.inject(.transient(reason: "503 service unavailable", retryAfter: .milliseconds(30_000)), on: .push)
        await clock.advance(by: .milliseconds(500))
        #expect(await device.engine.syncsStarted == 1)
        #expect(await device.engine.nextAttemptIn == .seconds(30), "the server's retry-after, longer than the jittered backoff")
        #expect(try await device.engine.outboxStatus().first?.nextAttemptIn == .seconds(30))
        #expect(await device.engine.status.lastSuccessfulSyncAt == nil)

        await clock.advance(by: .seconds(12))
        #expect(await device.engine.nextAttemptIn == .seconds(18), "read relative to now")
        await clock.advance(by: .seconds(18))
        #expect(await device.engine.syncsStarted == 2)
        #expect(try await device.store.outboxStatus().isEmpty)
        #expect(await device.engine.status.lastSuccessfulSyncAt == clock.wallTimeAtStart + 40.5)
        await device.engine.stop()
        try await device.store.close()
    }

    @Test("sync(within:) answers at the end of the budget while the request is still out")
    func syncWithinBudget() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-clock-tests"); defer { dir.remove() }
        let clock = ManualClock()
        let device = try await Device.open(dir.file("device.journal"), server: ReferenceServer(), syncClock: clock)
        try await device.store.create("pin", id: "p1", fields: [:])
        await device.faulty.holdNextRequest(.push)
        let engine = device.engine
        let cut = Task { await engine.sync(within: .seconds(20)) }
        await device.faulty.waitUntilHeld()
        await clock.advance(by: .seconds(20))
        #expect(await cut.value == .deadlineReached)
        await device.faulty.releaseHeld()
        await engine.untilSyncEnded()
        try await device.store.close()
    }
}

import SyncJournalProtocol
import SyncJournalCore
import SyncJournalSync
import SyncJournalTesting
import Testing


/// The scheduler, driven by a virtual clock: backoff with
/// full jitter and a cap, retry-after, coalescing, connectivity, and the
/// promise that the queue never stalls and never storms.
@Suite("Sync schedule: backoff, coalescing and the never-stall promise")
struct SyncScheduleTests {
    static let policy = RetryPolicy()  // 1 s base, 5 min cap, 0.5 s coalescing

    /// The never-stall promise, checked after every event.
    static func expectPromise(_ schedule: SyncSchedule, sourceLocation: SourceLocation = #_sourceLocation) {
        if schedule.hasPendingWork && schedule.isOnline && !schedule.isSyncing {
            #expect(schedule.nextAttemptAt != nil, "stalled: \(schedule)", sourceLocation: sourceLocation)
            if let next = schedule.nextAttemptAt, let until = schedule.backoffUntil {
                #expect(next >= until, "attempt before backoff: \(schedule)", sourceLocation: sourceLocation)
            }
        }
        if !schedule.isOnline || schedule.isSyncing || !schedule.hasPendingWork {
            #expect(schedule.nextAttemptAt == nil, "attempt scheduled when none can run: \(schedule)", sourceLocation: sourceLocation)
        }
    }

    // MARK: Backoff

    @Test("backoff bound doubles from the base and stops at the cap")
    func backoffGrowsAndIsCapped() {
        var generator = SeededGenerator(seed: 1)
        for n in 1...30 {
            let bound = min(Self.policy.maximumDelayMilliseconds, Self.policy.baseDelayMilliseconds << Int64(n - 1))
            #expect(Self.policy.backoffBound(afterFailures: n) == bound)
            var draws = Set<Int64>()
            for _ in 0..<500 {
                let delay = Self.policy.backoffDelay(afterFailures: n, using: &generator)
                #expect(delay >= 0 && delay <= bound, "n=\(n): \(delay) outside 0...\(bound)")
                draws.insert(delay)
            }
            // Jittered, not constant: 500 draws from 1_001 or more values are
            // spread out (about 394 distinct ones are expected for n = 1) and
            // reach both ends of the range.
            #expect(draws.count > 300, "n=\(n): only \(draws.count) distinct delays")
            #expect(draws.min()! < bound / 4 && draws.max()! > bound / 4 * 3, "n=\(n): draws bunched")
        }
        #expect(Self.policy.backoffBound(afterFailures: 9) == 256_000)
        #expect(Self.policy.backoffBound(afterFailures: 10) == 300_000)
    }

    @Test("full jitter draws across the whole range, down to 0 and up to the bound")
    func fullJitterCoversZeroToBound() {
        let policy = RetryPolicy(baseDelay: .milliseconds(4), maximumDelay: .milliseconds(1_000))
        var generator = SeededGenerator(seed: 2)
        var seen = Set<Int64>()
        for _ in 0..<2_000 { seen.insert(policy.backoffDelay(afterFailures: 1, using: &generator)) }
        #expect(seen == [0, 1, 2, 3, 4])

        // Over a large bound the draws fill the low and the high end alike.
        var low = 0, high = 0
        for _ in 0..<10_000 {
            let delay = Self.policy.backoffDelay(afterFailures: 20, using: &generator)
            if delay < 30_000 { low += 1 }
            if delay > 270_000 { high += 1 }
        }
        #expect(low > 500 && high > 500, "low \(low), high \(high)")
    }

    @Test("no failures means no delay")
    func noFailuresNoDelay() {
        var generator = SeededGenerator(seed: 3)
        for n in [Int.min, -5, -1, 0] {
            #expect(Self.policy.backoffDelay(afterFailures: n, using: &generator) == 0)
            #expect(Self.policy.backoffBound(afterFailures: n) == 0)
        }
    }

    @Test("a huge failure count does not overflow: the bound is the cap")
    func hugeFailureCountDoesNotOverflow() {
        var generator = SeededGenerator(seed: 4)
        let huge = RetryPolicy(baseDelay: .milliseconds(Int64.max / 2), maximumDelay: .milliseconds(Int64.max))
        for n in [62, 63, 64, 65, 1_000, Int.max] {
            #expect(Self.policy.backoffBound(afterFailures: n) == Self.policy.maximumDelayMilliseconds)
            let delay = Self.policy.backoffDelay(afterFailures: n, using: &generator)
            #expect(delay >= 0 && delay <= Self.policy.maximumDelayMilliseconds)
            #expect(huge.backoffBound(afterFailures: n) == Int64.max)
        }
        #expect(huge.backoffBound(afterFailures: 2) == Int64.max - 1)

        // The schedule's own arithmetic saturates too.
        var schedule = SyncSchedule(policy: huge, hasPendingWork: true, at: Int64.max - 10)
        schedule.handle(.syncStarted, at: Int64.max - 10, using: &generator)
        schedule.handle(.syncFinished(.transientFailure(retryAfterMilliseconds: Int64.max), outboxEmpty: false),
                        at: Int64.max - 5, using: &generator)
        #expect(schedule.backoffUntil == Int64.max)
        #expect(schedule.nextAttemptAt == Int64.max)
        Self.expectPromise(schedule)
    }

    // MARK: Failures and success

    @Test("a transient failure backs off; the server's retry-after is honoured")
    func retryAfterIsHonoured() {
        var generator = SeededGenerator(seed: 5)
        for trial in 0..<200 {
            var schedule = SyncSchedule(policy: Self.policy, hasPendingWork: true, at: 0)
            let now: Int64 = 10_000 + Int64(trial)
            schedule.handle(.syncStarted, at: now - 100, using: &generator)
            schedule.handle(.syncFinished(.transientFailure(retryAfterMilliseconds: 30_000), outboxEmpty: false),
                            at: now, using: &generator)
            // The first backoff is at most 1 s, so the retry-after decides.
            #expect(schedule.nextAttemptAt == now + 30_000)
            #expect(schedule.backoffUntil == now + 30_000)
            #expect(!schedule.isDue(at: now + 29_999))
            #expect(schedule.isDue(at: now + 30_000))
            // Edits and a reconnect during the backoff do not bring the attempt forward.
            schedule.handle(.localEdit, at: now + 1, using: &generator)
            schedule.handle(.connectivityChanged(online: false), at: now + 2, using: &generator)
            schedule.handle(.connectivityChanged(online: true), at: now + 3, using: &generator)
            #expect(schedule.nextAttemptAt == now + 30_000)
            Self.expectPromise(schedule)
        }

        // A retry-after shorter than the jittered backoff does not shorten it.
        var schedule = SyncSchedule(policy: RetryPolicy(baseDelay: .milliseconds(60_000)), hasPendingWork: true, at: 0)
        for _ in 0..<5 {
            let now: Int64 = 1_000_000
            schedule.handle(.syncStarted, at: now, using: &generator)
            schedule.handle(.syncFinished(.transientFailure(retryAfterMilliseconds: 1), outboxEmpty: false), at: now, using: &generator)
            #expect(schedule.nextAttemptAt! >= now + 1)
        }
        #expect(schedule.consecutiveFailures == 5)
    }

    @Test("failures grow the backoff; a success resets it")
    func successResetsBackoff() {
        var generator = SeededGenerator(seed: 6)
        var schedule = SyncSchedule(policy: Self.policy, hasPendingWork: true, at: 0)
        var now: Int64 = 0
        for failures in 1...12 {
            now = schedule.nextAttemptAt!
            schedule.handle(.syncStarted, at: now, using: &generator)
            now += 100
            schedule.handle(.syncFinished(failures.isMultiple(of: 2) ? .failed : .transientFailure(retryAfterMilliseconds: nil),
                                          outboxEmpty: false), at: now, using: &generator)
            #expect(schedule.consecutiveFailures == failures)
            let wait = schedule.backoffUntil! - now
            #expect(wait >= 0 && wait <= Self.policy.backoffBound(afterFailures: failures))
            #expect(schedule.nextAttemptAt == schedule.backoffUntil)
        }

        now = schedule.nextAttemptAt!
        schedule.handle(.syncStarted, at: now, using: &generator)
        now += 100
        // Edits arrived during the sync: the next attempt is one coalescing window away.
        schedule.handle(.syncFinished(.succeeded, outboxEmpty: false), at: now, using: &generator)
        #expect(schedule.consecutiveFailures == 0)
        #expect(schedule.backoffUntil == nil)
        #expect(schedule.nextAttemptAt == now + Self.policy.editCoalescingMilliseconds)

        // The next failure starts again from the base.
        schedule.handle(.syncStarted, at: now + 500, using: &generator)
        schedule.handle(.syncFinished(.transientFailure(retryAfterMilliseconds: nil), outboxEmpty: false), at: now + 600, using: &generator)
        #expect(schedule.consecutiveFailures == 1)
        #expect(schedule.backoffUntil! <= now + 600 + Self.policy.baseDelayMilliseconds)

        // A success that empties the outbox leaves nothing scheduled.
        schedule.handle(.syncStarted, at: schedule.nextAttemptAt!, using: &generator)
        schedule.handle(.syncFinished(.succeeded, outboxEmpty: true), at: now + 5_000, using: &generator)
        #expect(schedule.nextAttemptAt == nil)
        #expect(!schedule.hasPendingWork)
        Self.expectPromise(schedule)
    }

    @Test("being offline is not a failure: the backoff does not grow, and the next look is one offline probe later")
    func offlineIsNotAFailure() {
        var generator = SeededGenerator(seed: 7)
        var schedule = SyncSchedule(policy: Self.policy, hasPendingWork: true, at: 0)
        for round in 0..<5 {
            let start = Int64(round) * Self.policy.offlineProbeMilliseconds
            schedule.handle(.syncStarted, at: start, using: &generator)
            schedule.handle(.syncFinished(.offline, outboxEmpty: false), at: start + 10, using: &generator)
            #expect(schedule.isOnline, "the app's report of connectivity stands")
            #expect(schedule.consecutiveFailures == 0)
            #expect(schedule.backoffUntil == nil)
            #expect(schedule.nextAttemptAt == start + 10 + Self.policy.offlineProbeMilliseconds, "the probe delay does not grow")
            Self.expectPromise(schedule)
        }
    }

    @Test("after a sync found no connection, the app reporting connectivity brings the attempt forward to at once")
    func offlineThenAppReportsOnline() {
        var generator = SeededGenerator(seed: 7)
        var schedule = SyncSchedule(policy: Self.policy, hasPendingWork: true, at: 0)
        schedule.handle(.syncStarted, at: 0, using: &generator)
        schedule.handle(.syncFinished(.offline, outboxEmpty: false), at: 10, using: &generator)
        schedule.handle(.connectivityChanged(online: false), at: 20, using: &generator)
        #expect(schedule.nextAttemptAt == nil, "reported offline: no probing")
        schedule.handle(.connectivityChanged(online: true), at: 50, using: &generator)
        #expect(schedule.nextAttemptAt == 50)
        Self.expectPromise(schedule)
    }

    // MARK: Edits and connectivity

    @Test("an edit while offline schedules nothing; connectivity returning schedules an attempt at once")
    func editOfflineThenAttemptWhenOnline() {
        var generator = SeededGenerator(seed: 8)
        var schedule = SyncSchedule(policy: Self.policy, isOnline: false)
        schedule.handle(.localEdit, at: 1_000, using: &generator)
        #expect(schedule.hasPendingWork)
        #expect(schedule.nextAttemptAt == nil)
        for t in stride(from: Int64(1_000), through: 1_000_000, by: 10_000) {
            #expect(!schedule.isDue(at: t))
        }
        schedule.handle(.connectivityChanged(online: true), at: 2_000_000, using: &generator)
        #expect(schedule.nextAttemptAt == 2_000_000)
        #expect(schedule.isDue(at: 2_000_000))
        Self.expectPromise(schedule)

        // Offline again cancels it; a reconnect during a backoff waits for the backoff.
        schedule.handle(.syncStarted, at: 2_000_000, using: &generator)
        schedule.handle(.syncFinished(.transientFailure(retryAfterMilliseconds: 60_000), outboxEmpty: false), at: 2_000_100, using: &generator)
        schedule.handle(.connectivityChanged(online: false), at: 2_000_200, using: &generator)
        #expect(schedule.nextAttemptAt == nil)
        schedule.handle(.connectivityChanged(online: true), at: 2_000_300, using: &generator)
        #expect(schedule.nextAttemptAt == 2_060_100)
        Self.expectPromise(schedule)
    }

    @Test("a burst of 100 edits in the coalescing window schedules exactly one attempt at first edit + window")
    func burstOfEditsCoalesces() {
        var generator = SeededGenerator(seed: 9)
        var schedule = SyncSchedule(policy: Self.policy)
        let first: Int64 = 5_000
        let window = Self.policy.editCoalescingMilliseconds
        var scheduledTimes = Set<Int64>()
        for i in 0..<100 {
            let at = first + Int64(i) * (window - 1) / 100  // all inside the window
            schedule.handle(.localEdit, at: at, using: &generator)
            scheduledTimes.insert(schedule.nextAttemptAt!)
            Self.expectPromise(schedule)
        }
        #expect(scheduledTimes == [first + window])

        // Driving the clock ms by ms: one attempt, at first edit + window.
        var attempts: [Int64] = []
        for now in first...(first + 10 * window) where schedule.isDue(at: now) {
            attempts.append(now)
            schedule.handle(.syncStarted, at: now, using: &generator)
            schedule.handle(.syncFinished(.succeeded, outboxEmpty: true), at: now + 20, using: &generator)
        }
        #expect(attempts == [first + window])
    }

    // MARK: No attempt storm

    @Test("a 503 storm of 20 transient failures: every attempt waits for its backoff, then recovery empties the outbox")
    func noAttemptStorm() {
        var generator = SeededGenerator(seed: 10)
        var schedule = SyncSchedule(policy: Self.policy)
        let tick: Int64 = 10  // the virtual clock's resolution
        let requestTime: Int64 = 50
        var now: Int64 = 0
        schedule.handle(.localEdit, at: now, using: &generator)

        var attempts: [(at: Int64, backoffUntil: Int64?)] = []
        var failures = 0
        var recovered = false
        while !recovered {
            now += tick
            #expect(now < 100_000_000, "the storm never ended: \(schedule)")
            if now >= 100_000_000 { return }
            // An edit every few seconds of virtual time must not bring attempts forward.
            if now % 7_000 == 0 { schedule.handle(.localEdit, at: now, using: &generator) }
            Self.expectPromise(schedule)
            guard schedule.isDue(at: now) else { continue }

            attempts.append((now, schedule.backoffUntil))
            schedule.handle(.syncStarted, at: now, using: &generator)
            now += requestTime
            if failures < 20 {
                failures += 1
                // Every third 503 carries a Retry-After of 2 s.
                let retryAfter: Int64? = failures.isMultiple(of: 3) ? 2_000 : nil
                schedule.handle(.syncFinished(.transientFailure(retryAfterMilliseconds: retryAfter), outboxEmpty: false),
                                at: now, using: &generator)
                #expect(schedule.consecutiveFailures == failures)
                if let retryAfter { #expect(schedule.nextAttemptAt! >= now + retryAfter) }
            } else {
                schedule.handle(.syncFinished(.succeeded, outboxEmpty: true), at: now, using: &generator)
                recovered = true
            }
            Self.expectPromise(schedule)
        }

        // 20 failed attempts plus the one that succeeded: no more.
        #expect(attempts.count == 21)
        for attempt in attempts {
            if let until = attempt.backoffUntil { #expect(attempt.at >= until) }
        }
        #expect(schedule.consecutiveFailures == 0)
        #expect(schedule.backoffUntil == nil)
        #expect(!schedule.hasPendingWork)
        #expect(schedule.nextAttemptAt == nil)
    }

    // MARK: The promise, over random histories

    @Test("property: after any event, pending work online and idle always has an attempt scheduled, never before the backoff")
    func promiseHoldsOverRandomEventSequences() {
        var generator = SeededGenerator(seed: 0x5C4E_D01E)
        let policies = [
            Self.policy,
            RetryPolicy(baseDelay: .milliseconds(10), maximumDelay: .milliseconds(1_000), editCoalescing: .milliseconds(0)),
            RetryPolicy(baseDelay: .milliseconds(0), maximumDelay: .milliseconds(0), editCoalescing: .milliseconds(50)),
        ]
        for sequence in 0..<3_000 {
            let policy = policies[sequence % policies.count]
            var now = Int64.random(in: 0...1_000_000, using: &generator)
            var schedule = SyncSchedule(policy: policy,
                                        isOnline: Bool.random(using: &generator),
                                        hasPendingWork: Bool.random(using: &generator),
                                        at: now)
            Self.expectPromise(schedule)
            for _ in 0..<Int.random(in: 1...60, using: &generator) {
                now += [0, 1, 10, 499, 500, 501, 5_000, 400_000].randomElement(using: &generator)!
                let event = Self.randomEvent(for: schedule, now: now, using: &generator)
                let before = schedule
                schedule.handle(event, at: now, using: &generator)
                Self.expectPromise(schedule)
                // A local edit never postpones an attempt already scheduled.
                if event == .localEdit, let earlier = before.nextAttemptAt, let later = schedule.nextAttemptAt {
                    #expect(later <= earlier)
                }
                if schedule.hasPendingWork && schedule.isOnline && !schedule.isSyncing && schedule.nextAttemptAt == nil {
                    Issue.record("sequence \(sequence): stalled after \(event) from \(before)")
                    return
                }
            }
        }
    }

    /// Mostly plausible events (a sync starts when due, finishes after it
    /// started), with some implausible ones mixed in.
    private static func randomEvent(for schedule: SyncSchedule, now: Int64, using generator: inout SeededGenerator) -> SyncSchedule.Event {
        let results: [SyncSchedule.Result] = [
            .succeeded, .offline, .failed,
            .transientFailure(retryAfterMilliseconds: nil),
            .transientFailure(retryAfterMilliseconds: Int64.random(in: 0...120_000, using: &generator)),
        ]
        if schedule.isSyncing, Int.random(in: 0..<3, using: &generator) > 0 {
            return .syncFinished(results.randomElement(using: &generator)!, outboxEmpty: Bool.random(using: &generator))
        }
        if schedule.isDue(at: now), Bool.random(using: &generator) {
            return .syncStarted
        }
        switch Int.random(in: 0..<6, using: &generator) {
        case 0, 1: return .localEdit
        case 2: return .connectivityChanged(online: Bool.random(using: &generator))
        case 3: return .syncStarted
        default: return .syncFinished(results.randomElement(using: &generator)!, outboxEmpty: Bool.random(using: &generator))
        }
    }
}

import SyncJournalCore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// The schedule's pulls with nothing pending, as a pure state machine: idle
/// intervals, pulls asked for during a sync, the backoff, and the pause
/// after refused credentials.
@Suite("Sync schedule: idle pulls, requested pulls and the sign-in pause")
struct IdlePullScheduleTests {
    static let policy = RetryPolicy(baseDelay: .milliseconds(1_000), maximumDelay: .milliseconds(16_000), editCoalescing: .milliseconds(500))

    @Test("with an idle interval, a sync that ends well schedules the next pull one interval later, with nothing pending")
    func idleIntervalAfterSync() {
        var generator = SeededGenerator(seed: 3)
        var schedule = SyncSchedule(policy: Self.policy, at: 0, idlePullMilliseconds: 30_000)
        #expect(schedule.nextAttemptAt == nil, "no pull before one is asked for or a sync ends")
        schedule.handle(.syncStarted, at: 10, using: &generator)
        schedule.handle(.syncEnded(.succeeded, pendingWorkReadyAt: nil), at: 20, using: &generator)
        #expect(schedule.nextAttemptAt == 30_020)
        #expect(!schedule.isDue(at: 30_019) && schedule.isDue(at: 30_020))
    }

    @Test("without an idle interval, nothing is scheduled when nothing is pending")
    func noIntervalNoPull() {
        var generator = SeededGenerator(seed: 3)
        var schedule = SyncSchedule(policy: Self.policy, at: 0)
        schedule.handle(.syncStarted, at: 0, using: &generator)
        schedule.handle(.syncEnded(.succeeded, pendingWorkReadyAt: nil), at: 5, using: &generator)
        #expect(schedule.nextAttemptAt == nil)
    }

    @Test("a pull asked for during a sync follows it at once; asked for while idle it is due at once; offline it is dropped")
    func requestedPulls() {
        var generator = SeededGenerator(seed: 3)
        var schedule = SyncSchedule(policy: Self.policy, at: 0)
        schedule.handle(.pullRequested, at: 100, using: &generator)
        #expect(schedule.nextAttemptAt == 100)
        schedule.handle(.syncStarted, at: 100, using: &generator)
        schedule.handle(.pullRequested, at: 150, using: &generator)
        #expect(schedule.nextAttemptAt == nil, "never two syncs at once")
        schedule.handle(.syncEnded(.succeeded, pendingWorkReadyAt: nil), at: 200, using: &generator)
        #expect(schedule.nextAttemptAt == 200, "the running sync may have pulled before the change")
        schedule.handle(.connectivityChanged(online: false), at: 210, using: &generator)
        schedule.handle(.pullRequested, at: 220, using: &generator)
        #expect(schedule.nextAttemptAt == nil)
    }

    @Test("after a failed sync the next idle pull waits for the interval and the backoff, whichever is later")
    func idlePullRespectsBackoff() {
        var generator = SeededGenerator(seed: 3)
        var schedule = SyncSchedule(policy: Self.policy, at: 0, idlePullMilliseconds: 100)
        schedule.handle(.syncStarted, at: 0, using: &generator)
        schedule.handle(.syncEnded(.transientFailure(retryAfterMilliseconds: 5_000), pendingWorkReadyAt: nil), at: 0, using: &generator)
        let until = try! #require(schedule.backoffUntil)
        #expect(until >= 5_000)
        #expect(schedule.nextAttemptAt == until)
        schedule.handle(.pullRequested, at: 10, using: &generator)
        #expect(schedule.nextAttemptAt == until, "a pull asked for waits out the backoff too")
    }

    @Test("refused credentials pause everything: edits, idle pulls and requested pulls schedule nothing until the app signs in again")
    func authenticationPause() {
        var generator = SeededGenerator(seed: 3)
        var schedule = SyncSchedule(policy: Self.policy, at: 0, idlePullMilliseconds: 1_000)
        schedule.handle(.localEdit, at: 0, using: &generator)
        schedule.handle(.syncStarted, at: 500, using: &generator)
        schedule.handle(.syncEnded(.authenticationNeeded, pendingWorkReadyAt: 500), at: 600, using: &generator)
        #expect(schedule.isPausedForAuthentication)
        #expect(schedule.hasPendingWork)
        #expect(schedule.nextAttemptAt == nil)
        schedule.handle(.localEdit, at: 700, using: &generator)
        schedule.handle(.pullRequested, at: 800, using: &generator)
        schedule.handle(.connectivityChanged(online: true), at: 900, using: &generator)
        #expect(schedule.nextAttemptAt == nil)
        #expect(schedule.consecutiveFailures == 0, "not a failure of the server: no backoff grows")
        schedule.handle(.authenticationRenewed, at: 5_000, using: &generator)
        #expect(!schedule.isPausedForAuthentication)
        #expect(schedule.nextAttemptAt == 5_000)
    }
}

import SyncJournalCore
import SyncJournalSync
import Testing

/// The engine reads the outbox, then tells the schedule what it found. An
/// edit can become durable between the two; these pin the rule that keeps
/// such an edit from waiting for the next one.
@Suite("Scheduler state: an edit signalled during an outbox read")
struct SchedulerStateTests {
    static let policy = RetryPolicy(baseDelay: .milliseconds(1_000), maximumDelay: .milliseconds(16_000), editCoalescing: .milliseconds(500))

    /// A started scheduler in the middle of a sync, with an empty outbox.
    static func syncing() -> SchedulerState {
        var state = SchedulerState(schedule: SyncSchedule(policy: policy, at: 0), generator: SeededGenerator(seed: 7))
        state.started = true
        state.handle(.syncStarted, at: 0)
        return state
    }

    @Test("an edit made after the end-of-sync outbox read still gets an attempt")
    func editDuringEndOfSyncRead() {
        var state = Self.syncing()
        let editsBefore = state.editsSignalled
        // The read found nothing to send; the edit lands before the engine reports it.
        let made = state.editMade(at: 100)
        #expect(made)
        state.settle(.syncEnded(.succeeded, pendingWorkReadyAt: nil), editsBefore: editsBefore, at: 120)
        #expect(state.schedule.nextAttemptAt != nil, "the edit's attempt survives the report of an empty outbox")
        #expect(state.schedule.isDue(at: state.schedule.nextAttemptAt!))
    }

    @Test("with no edit since the read, an empty outbox leaves nothing to push")
    func noEditDuringRead() {
        var state = Self.syncing()
        let editsBefore = state.editsSignalled
        state.settle(.syncEnded(.succeeded, pendingWorkReadyAt: nil), editsBefore: editsBefore, at: 120)
        #expect(state.schedule.nextAttemptAt == nil)
    }

    @Test("an edit made during the pending-work read after start still gets an attempt")
    func editDuringPendingWorkRead() {
        var state = SchedulerState(schedule: SyncSchedule(policy: Self.policy, at: 0), generator: SeededGenerator(seed: 7))
        state.started = true
        let editsBefore = state.editsSignalled
        let made = state.editMade(at: 10)
        #expect(made)
        state.settle(.pendingWorkChanged(readyAt: nil), editsBefore: editsBefore, at: 20)
        #expect(state.schedule.nextAttemptAt != nil)
    }

    @Test("a stopped scheduler ignores edits")
    func stoppedIgnoresEdits() {
        var state = SchedulerState(schedule: SyncSchedule(policy: Self.policy, at: 0), generator: SeededGenerator(seed: 7))
        let made = state.editMade(at: 10)
        #expect(!made)
        #expect(state.editsSignalled == 0)
        #expect(state.schedule.nextAttemptAt == nil)
    }
}

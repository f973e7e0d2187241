import SyncJournalCore
import SyncJournalPlatform

/// What the engine's scheduler decides with, kept behind a lock rather than
/// in the engine actor: a local edit updates it and sets the timer from the
/// store's thread, without waiting for the engine (an edit waits for its own
/// durability and nothing else), and when the edit returns the attempt it
/// asked for is already scheduled.
package struct SchedulerState: Sendable {
    /// The schedule itself (meaningful once started).
    package var schedule: SyncSchedule
    /// The jitter source of every backoff.
    var generator: SeededGenerator
    /// The timer set for the schedule's next attempt.
    var timer: EngineTimer?
    /// Whether ``SyncEngine/start(online:)`` has run (and not ``SyncEngine/stop()``).
    package var started = false
    /// Set by ``SyncEngine/suspend()`` until ``SyncEngine/resume()``.
    var suspended = false
    /// Whether a status refresh asked for by an edit is yet to run.
    var statusRefreshRequested = false
    /// Local edits signalled so far. The engine reads the outbox, then tells
    /// the schedule what it found; an edit signalled in between is not in
    /// what it read, and this count tells it so.
    package var editsSignalled = 0

    /// A stopped scheduler with `schedule` and the jitter of `generator`.
    package init(schedule: SyncSchedule, generator: SeededGenerator) {
        self.schedule = schedule
        self.generator = generator
    }

    /// Tells the schedule about `event` at `now`.
    package mutating func handle(_ event: SyncSchedule.Event, at now: Int64) {
        schedule.handle(event, at: now, using: &generator)
    }

    /// A local edit became durable at `now`: counted, and its step taken.
    /// Returns whether the engine was started (a stopped engine ignores
    /// edits; ``SyncEngine/start(online:)`` reads the outbox).
    package mutating func editMade(at now: Int64) -> Bool {
        guard started else { return false }
        editsSignalled += 1
        handle(.localEdit, at: now)
        return true
    }

    /// Tells the schedule `event`, which carries what the outbox held when
    /// the engine read it, and then of a local edit if one was signalled
    /// since `editsBefore` was counted (before that read): such an edit
    /// became durable after the read, so it is not in what the event says,
    /// and without its own step it would wait for the next edit.
    package mutating func settle(_ event: SyncSchedule.Event, editsBefore: Int, at now: Int64) {
        handle(event, at: now)
        if editsSignalled != editsBefore { handle(.localEdit, at: now) }
    }

    /// Sets the timer for the schedule's next attempt (none when not
    /// started, suspended or with nothing to do), cancelling the last one.
    mutating func arm(on clock: EngineClock, fire: @escaping @Sendable () async -> Void) {
        timer?.cancel()
        timer = nil
        guard started, !suspended, let at = schedule.nextAttemptAt else { return }
        timer = clock.schedule(at: at, fire)
    }

    /// Cancels the timer.
    mutating func cancelTimer() {
        timer?.cancel()
        timer = nil
    }
}

import SyncJournalPlatform
import SyncJournalSync

/// A virtual ``SyncClock`` for tests and simulations: time stands still until
/// the test moves it with ``advance(by:)`` or ``advance(to:)``, and timers
/// fire only then, in deadline order, each one **awaited** before the next.
/// Nothing sleeps, so a test of backoff over hours runs in milliseconds and
/// repeats exactly.
///
/// Because ``advance(to:)`` awaits every timer's action, once it returns the
/// work the timers started has finished: with a ``SyncEngine`` whose
/// scheduler timer awaits its sync, the triggered syncs are over.
///
/// ```swift
/// let clock = ManualClock()
/// let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["pin"]), clock: clock)
/// await engine.start()
/// try await store.create("pin", fields: [:])   // an attempt is scheduled 500 ms later
/// await clock.advance(by: 500)                 // the sync runs and has finished here
/// ```
public final class ManualClock: SyncClock {
    private struct Timer {
        var deadline: Int64
        /// Registration order: timers with the same deadline fire in the order they were set.
        var sequence: UInt64
        var action: @Sendable () async -> Void
    }

    private struct State {
        var now: Int64
        var timers: [UInt64: Timer] = [:]
        var nextSequence: UInt64 = 0
        var fired = 0
    }

    private let state: Mutex<State>

    /// The most timers one call of ``advance(to:)`` fires. A timer action
    /// that keeps re-arming itself inside the window (an attempt storm)
    /// would otherwise never let the call return; past the limit the rest
    /// stay pending, ``advance(to:)`` returns, and the test can see it in the
    /// returned count and in ``pendingTimerDeadlines``.
    ///
    /// ```swift
    /// let clock = ManualClock(maximumFiringsPerAdvance: 1_000)
    /// let fired = await clock.advance(by: 60_000)
    /// #expect(fired < 1_000, "no attempt storm")
    /// ```
    public let maximumFiringsPerAdvance: Int

    /// A clock reading `now` milliseconds, with no timers.
    ///
    /// ```swift
    /// let clock = ManualClock(now: 1_000)
    /// clock.now()   // 1_000
    /// ```
    public init(now: Int64 = 0, maximumFiringsPerAdvance: Int = 100_000) {
        state = Mutex(State(now: now))
        self.maximumFiringsPerAdvance = max(1, maximumFiringsPerAdvance)
    }

    /// The virtual time in milliseconds; it moves only with ``advance(by:)``
    /// and ``advance(to:)`` (and never backwards).
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// await clock.advance(by: 250)
    /// clock.now()   // 250
    /// ```
    public func now() -> Int64 {
        state.withLock { $0.now }
    }

    /// Registers `action` to run when the clock is advanced to `deadline` or
    /// beyond. A deadline at or before ``now()`` fires on the next advance
    /// (even ``advance(by:)`` with 0). Cancelling the returned timer removes
    /// it; cancelling after it fired is harmless.
    ///
    /// ```swift
    /// let timer = clock.schedule(at: clock.now() + 1_000) { print("fired") }
    /// timer.cancel()                  // removed: advancing prints nothing
    /// ```
    public func schedule(at deadline: Int64, _ action: @escaping @Sendable () async -> Void) -> SyncTimer {
        let id = state.withLock { state -> UInt64 in
            let id = state.nextSequence
            state.nextSequence += 1
            state.timers[id] = Timer(deadline: deadline, sequence: id, action: action)
            return id
        }
        return SyncTimer { [weak self] in
            _ = self?.state.withLock { $0.timers.removeValue(forKey: id) }
        }
    }

    /// Moves the clock forward by `milliseconds` (a negative value acts as 0),
    /// firing the timers that fall due on the way, as ``advance(to:)`` does.
    ///
    /// ```swift
    /// await clock.advance(by: 1_000)   // fires every timer due within the next second
    /// ```
    ///
    /// - Returns: the number of timers fired.
    @discardableResult
    public func advance(by milliseconds: Int64) async -> Int {
        let target = state.withLock { state -> Int64 in
            let (sum, overflow) = state.now.addingReportingOverflow(max(0, milliseconds))
            return overflow ? .max : sum
        }
        return await advance(to: target)
    }

    /// Moves the clock to `target`, firing every timer with a deadline at or
    /// before it, earliest deadline first (ties in the order they were set).
    /// Before each timer runs, ``now()`` is set to its deadline (never back),
    /// and its action is awaited before the next timer is looked at, so timers
    /// an action sets inside the window fire in this call too. Then the clock
    /// reads `target` (or stays where it is, if that is later).
    ///
    /// ```swift
    /// _ = clock.schedule(at: 100) { print("A at", clock.now()) }      // A at 100
    /// _ = clock.schedule(at: 50) {
    ///     print("B at", clock.now())                                   // B at 50, first
    ///     _ = clock.schedule(at: 70) { print("C at", clock.now()) }   // C at 70, before A
    /// }
    /// await clock.advance(to: 100)
    /// ```
    ///
    /// - Returns: the number of timers fired (at most ``maximumFiringsPerAdvance``).
    @discardableResult
    public func advance(to target: Int64) async -> Int {
        var fired = 0
        while fired < maximumFiringsPerAdvance {
            let due = state.withLock { state -> Timer? in
                let limit = max(target, state.now)
                guard let next = state.timers.values
                    .filter({ $0.deadline <= limit })
                    .min(by: { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) })
                else { return nil }
                state.timers[next.sequence] = nil
                state.now = max(state.now, next.deadline)
                state.fired += 1
                return next
            }
            guard let due else { break }
            fired += 1
            await due.action()
        }
        state.withLock { $0.now = max($0.now, target) }
        return fired
    }

    /// The deadlines of the timers waiting to fire, earliest first.
    ///
    /// ```swift
    /// #expect(clock.pendingTimerDeadlines == [2_000], "one attempt scheduled, at the end of the backoff")
    /// ```
    public var pendingTimerDeadlines: [Int64] {
        state.withLock { $0.timers.values.sorted { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) }.map(\.deadline) }
    }

    /// The earliest pending deadline, or `nil` when no timer waits.
    ///
    /// ```swift
    /// if let next = clock.nextDeadline { await clock.advance(to: next) }
    /// ```
    public var nextDeadline: Int64? {
        state.withLock { $0.timers.values.map(\.deadline).min() }
    }

    /// Timers fired since the clock was made (by every advance).
    ///
    /// ```swift
    /// await clock.advance(by: 3_600_000)
    /// #expect(clock.firedTimers < 20, "no attempt storm over an hour")
    /// ```
    public var firedTimers: Int {
        state.withLock { $0.fired }
    }
}

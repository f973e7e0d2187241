#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncJournalPlatform
import SyncJournalStore
import SyncJournalSync

/// A virtual ``SyncClock`` for tests and simulations: time stands still until
/// the test moves it with ``advance(by:)`` or ``advance(to:)``, and timers
/// fire only then, in deadline order, each one **awaited** before the next.
/// Nothing sleeps, so a test of backoff over hours runs in milliseconds and
/// repeats exactly.
///
/// Because ``advance(to:)`` awaits every timer's action, once it returns the
/// work the timers started has finished: with a ``SyncEngine`` whose
/// scheduler timer awaits its sync, the triggered syncs are over. Give the
/// store the same clock, so its `queuedAt` stamps are virtual too.
///
/// ```swift
/// let clock = ManualClock()
/// let store = try await LocalStore.open(path: "pins.journal", options: .init(clock: clock))
/// let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["pin"]), clock: clock)
/// await engine.start()
/// try await store.create("pin", fields: [:])   // an attempt is scheduled 500 ms later
/// await clock.advance(by: .milliseconds(500))  // the sync runs and has finished here
/// ```
public final class ManualClock: SyncClock {
    /// A point in the clock's virtual time.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let later = clock.now.advanced(by: .seconds(2))
    /// clock.now.duration(to: later)   // 2 seconds
    /// ```
    public struct Instant: InstantProtocol {
        /// Virtual time since the clock started.
        fileprivate var sinceStart: Duration

        /// The instant `duration` later (earlier, if negative).
        public func advanced(by duration: Duration) -> Instant {
            Instant(sinceStart: sinceStart + duration)
        }

        /// The time from this instant to `other` (negative if `other` is earlier).
        public func duration(to other: Instant) -> Duration {
            other.sinceStart - sinceStart
        }

        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.sinceStart < rhs.sinceStart
        }
    }

    /// What a pending timer does when it falls due.
    private enum Wake {
        /// A timer set with ``schedule(at:_:)``: its action is awaited.
        case action(@Sendable () async -> Void)
        /// A task in ``sleep(until:tolerance:)``: it is resumed.
        case sleeper(CheckedContinuation<Void, any Error>)
    }

    private struct Timer {
        var deadline: Instant
        /// Registration order: timers with the same deadline fire in the order they were set.
        var sequence: UInt64
        var wake: Wake
    }

    private struct State {
        var now = Instant(sinceStart: .zero)
        var timers: [UInt64: Timer] = [:]
        var nextSequence: UInt64 = 0
        var fired = 0
        /// Sleeps cancelled before they were registered.
        var cancelledSleeps: Set<UInt64> = []

        mutating func allocate() -> UInt64 {
            defer { nextSequence += 1 }
            return nextSequence
        }
    }

    private let state = Mutex(State())

    /// The wall time when the clock started; ``wallTime`` moves on from it
    /// with the virtual time.
    public let wallTimeAtStart: Date

    /// The most timers one call of ``advance(to:)`` fires. A timer action
    /// that keeps re-arming itself inside the window (an attempt storm)
    /// would otherwise never let the call return; past the limit the rest
    /// stay pending, ``advance(to:)`` returns, and the test can see it in the
    /// returned count and in ``pendingTimerDeadlines``.
    ///
    /// ```swift
    /// let clock = ManualClock(maximumFiringsPerAdvance: 1_000)
    /// let fired = await clock.advance(by: .seconds(60))
    /// #expect(fired < 1_000, "no attempt storm")
    /// ```
    public let maximumFiringsPerAdvance: Int

    /// A clock at its start, with no timers, whose wall time reads
    /// `wallTimeAtStart` (late 2025 unless told, so stamps repeat exactly).
    ///
    /// ```swift
    /// let clock = ManualClock(wallTimeAtStart: Date(timeIntervalSince1970: 0))
    /// await clock.advance(by: .seconds(90))
    /// clock.wallTime   // 1970-01-01 00:01:30 +0000
    /// ```
    public init(wallTimeAtStart: Date = Date(timeIntervalSince1970: 1_764_000_000), maximumFiringsPerAdvance: Int = 100_000) {
        self.wallTimeAtStart = wallTimeAtStart
        self.maximumFiringsPerAdvance = max(1, maximumFiringsPerAdvance)
    }

    /// The virtual time; it moves only with ``advance(by:)`` and
    /// ``advance(to:)`` (and never backwards).
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let start = clock.now
    /// await clock.advance(by: .milliseconds(250))
    /// start.duration(to: clock.now)   // 0.25 seconds
    /// ```
    public var now: Instant {
        state.withLock { $0.now }
    }

    /// Exact: virtual time moves only by the amounts given.
    public var minimumResolution: Duration { .zero }

    /// ``wallTimeAtStart`` plus the virtual time elapsed since.
    public var wallTime: Date {
        let (seconds, attoseconds) = now.sinceStart.components
        return wallTimeAtStart.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// Suspends until the clock is advanced to `deadline` or beyond (at
    /// once, if it has passed); throws `CancellationError` if the task is
    /// cancelled first. The sleeper is resumed, not awaited: what it does
    /// next runs alongside the rest of the advance.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let waiter = Task { try await clock.sleep(for: .seconds(5)) }
    /// await clock.advance(by: .seconds(5))   // the sleep ends here
    /// try await waiter.value
    /// ```
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { $0.allocate() }
        // A cancellation that came after the wake left its mark: clear it.
        defer { state.withLock { _ = $0.cancelledSleeps.remove(id) } }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Start { case registered, passed, cancelled }
                let start = state.withLock { state -> Start in
                    if state.cancelledSleeps.remove(id) != nil { return .cancelled }
                    if deadline <= state.now { return .passed }
                    state.timers[id] = Timer(deadline: deadline, sequence: id, wake: .sleeper(continuation))
                    return .registered
                }
                switch start {
                case .registered: break
                case .passed: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let timer = state.timers.removeValue(forKey: id) else {
                    // Not registered yet (or already woken): the registration sees the mark.
                    state.cancelledSleeps.insert(id)
                    return nil
                }
                guard case .sleeper(let continuation) = timer.wake else { return nil }
                return continuation
            }
            sleeper?.resume(throwing: CancellationError())
        }
    }

    /// Registers `action` to run when the clock is advanced to `deadline` or
    /// beyond. A deadline at or before ``now`` fires on the next advance
    /// (even ``advance(by:)`` with zero). Calling the returned function
    /// removes the timer; calling it after it fired is harmless.
    ///
    /// ```swift
    /// let cancel = clock.schedule(at: clock.now.advanced(by: .seconds(1))) { print("fired") }
    /// cancel()                  // removed: advancing prints nothing
    /// ```
    public func schedule(at deadline: Instant, _ action: @escaping @Sendable () async -> Void) -> @Sendable () -> Void {
        let id = state.withLock { state -> UInt64 in
            let id = state.allocate()
            state.timers[id] = Timer(deadline: deadline, sequence: id, wake: .action(action))
            return id
        }
        return { [weak self] in
            _ = self?.state.withLock { $0.timers.removeValue(forKey: id) }
        }
    }

    /// Moves the clock forward by `duration` (a negative one acts as zero),
    /// firing the timers that fall due on the way, as ``advance(to:)`` does.
    ///
    /// ```swift
    /// await clock.advance(by: .seconds(1))   // fires every timer due within the next second
    /// ```
    ///
    /// - Returns: the number of timers fired.
    @discardableResult
    public func advance(by duration: Duration) async -> Int {
        await advance(to: now.advanced(by: max(.zero, duration)))
    }

    /// Moves the clock to `target`, firing every timer with a deadline at or
    /// before it, earliest deadline first (ties in the order they were set).
    /// Before each timer runs, ``now`` is set to its deadline (never back),
    /// and its action is awaited before the next timer is looked at, so timers
    /// an action sets inside the window fire in this call too. A task asleep
    /// in ``sleep(until:tolerance:)`` is resumed in its turn. Then the clock
    /// reads `target` (or stays where it is, if that is later).
    ///
    /// ```swift
    /// let start = clock.now
    /// _ = clock.schedule(at: start.advanced(by: .milliseconds(100))) { print("A") }      // A third
    /// _ = clock.schedule(at: start.advanced(by: .milliseconds(50))) {
    ///     print("B")                                                                      // B first
    ///     _ = clock.schedule(at: start.advanced(by: .milliseconds(70))) { print("C") }   // C second
    /// }
    /// await clock.advance(to: start.advanced(by: .milliseconds(100)))
    /// ```
    ///
    /// - Returns: the number of timers fired (at most ``maximumFiringsPerAdvance``).
    @discardableResult
    public func advance(to target: Instant) async -> Int {
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
            switch due.wake {
            case .action(let action): await action()
            case .sleeper(let continuation): continuation.resume()
            }
        }
        state.withLock { $0.now = max($0.now, target) }
        return fired
    }

    /// The deadlines of the timers (and sleeps) waiting to fire, earliest first.
    ///
    /// ```swift
    /// #expect(clock.pendingTimerDeadlines == [start.advanced(by: .seconds(2))], "one attempt, at the end of the backoff")
    /// ```
    public var pendingTimerDeadlines: [Instant] {
        state.withLock { $0.timers.values.sorted { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) }.map(\.deadline) }
    }

    /// The earliest pending deadline, or `nil` when no timer waits.
    ///
    /// ```swift
    /// if let next = clock.nextDeadline { await clock.advance(to: next) }
    /// ```
    public var nextDeadline: Instant? {
        state.withLock { $0.timers.values.map(\.deadline).min() }
    }

    /// Timers fired (and sleeps ended) since the clock was made, by every advance.
    ///
    /// ```swift
    /// await clock.advance(by: .seconds(3_600))
    /// #expect(clock.firedTimers < 20, "no attempt storm over an hour")
    /// ```
    public var firedTimers: Int {
        state.withLock { $0.fired }
    }
}

// The engine counts from the clock's start, so the package's tests and
// simulator can read its times in the clock's milliseconds.
extension ManualClock: SyncClockWithStart {
    /// The instant the clock started at.
    package var start: Instant { Instant(sinceStart: .zero) }

    /// Virtual milliseconds since the start (rounded down).
    package var elapsedMilliseconds: Int64 { Self.milliseconds(now) }

    /// The instant `milliseconds` after the start.
    package func instant(atMilliseconds milliseconds: Int64) -> Instant {
        Instant(sinceStart: .milliseconds(milliseconds))
    }

    /// `instant` as whole milliseconds since the start (rounded down).
    package static func milliseconds(_ instant: Instant) -> Int64 {
        let (seconds, attoseconds) = instant.sinceStart.components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }

    /// Advances to `milliseconds` after the start (see ``advance(to:)``).
    @discardableResult
    package func advance(toMilliseconds milliseconds: Int64) async -> Int {
        await advance(to: instant(atMilliseconds: milliseconds))
    }

    /// Advances by `milliseconds` (see ``advance(by:)``).
    @discardableResult
    package func advance(byMilliseconds milliseconds: Int64) async -> Int {
        await advance(by: .milliseconds(milliseconds))
    }

    /// ``pendingTimerDeadlines`` in milliseconds since the start.
    package var pendingTimerDeadlineMilliseconds: [Int64] { pendingTimerDeadlines.map(Self.milliseconds) }

    /// ``nextDeadline`` in milliseconds since the start.
    package var nextDeadlineMilliseconds: Int64? { nextDeadline.map(Self.milliseconds) }
}

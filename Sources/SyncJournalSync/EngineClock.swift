#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncJournalStore

/// The engine's view of its ``SyncClock``: whole milliseconds since a fixed
/// origin (the clock's start, if it has one, or the moment the engine was
/// made), which is what the schedule computes with. Keeping the clock's own
/// instant type out of the engine lets the engine hold any clock.
struct EngineClock: Sendable {
    private let elapsed: @Sendable () -> Duration
    private let setTimer: @Sendable (Duration, @escaping @Sendable () async -> Void) -> @Sendable () -> Void
    private let readWallTime: @Sendable () -> Date

    init<C: SyncClock>(_ clock: C) {
        let origin = ((clock as? any SyncClockWithStart)?.start as? C.Instant) ?? clock.now
        elapsed = { origin.duration(to: clock.now) }
        setTimer = { offset, action in clock.schedule(at: origin.advanced(by: offset), action) }
        readWallTime = { clock.wallTime }
    }

    /// Milliseconds since the origin (rounded down).
    func now() -> Int64 { Self.milliseconds(elapsed(), roundingUp: false) }

    /// The wall time now.
    var wallTime: Date { readWallTime() }

    /// Runs `action` when the clock reaches `deadline` (milliseconds since the origin).
    func schedule(at deadline: Int64, _ action: @escaping @Sendable () async -> Void) -> EngineTimer {
        EngineTimer(cancel: setTimer(.milliseconds(deadline), action))
    }

    /// `duration` in whole milliseconds (saturating), rounded up or down.
    static func milliseconds(_ duration: Duration, roundingUp: Bool) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
        if overflow { return seconds > 0 ? .max : .min }
        let perMillisecond: Int64 = 1_000_000_000_000_000
        var fraction = attoseconds / perMillisecond
        let rest = attoseconds % perMillisecond
        if roundingUp, rest > 0 { fraction += 1 }
        if !roundingUp, rest < 0 { fraction -= 1 }
        let (sum, overflowSum) = whole.addingReportingOverflow(fraction)
        return overflowSum ? (fraction > 0 ? .max : .min) : sum
    }
}

/// A timer the engine set; cancelling stops it if it has not fired.
struct EngineTimer: Sendable {
    let cancel: @Sendable () -> Void
}

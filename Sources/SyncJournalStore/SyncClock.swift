#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The clock a store and its sync engine read the time from: a standard
/// `Clock` measured in `Duration`, which can also set timers and tell the
/// wall time. Injected, so tests and simulations drive time by hand and
/// never sleep.
///
/// The engine measures waits (edit coalescing, backoff, idle pulls) on the
/// clock's monotonic instants, so changing the device's date never makes it
/// retry early or late; the store stamps edits (`queuedAt`) with
/// ``wallTime``, which is informational only and never becomes a base or a
/// cursor.
///
/// `ContinuousClock` is the real one: its time keeps counting while the
/// device sleeps, so a backoff ends on time even across a sleep. A test
/// passes `ManualClock` (in SyncJournalTesting) to both store and engine.
///
/// ```swift
/// let store = try await LocalStore.open(path: "pins.journal", options: .init(clock: ContinuousClock()))
/// let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["pin"]),
///                         clock: ContinuousClock())
/// ```
public protocol SyncClock: Clock where Duration == Swift.Duration {
    /// The wall time now, as a person reads it: what the store stamps on
    /// edits. It may jump (the user changes the date), so nothing is timed by it.
    var wallTime: Date { get }

    /// Runs `action` once the clock reaches `deadline` (at once if it has
    /// passed), unless cancelled first.
    ///
    /// The engine sets its timers through this instead of sleeping, so a
    /// clock driven by hand can run each action to its end before it moves
    /// on, and a test knows the triggered work is over when the time has
    /// moved. The default sleeps in a task until `deadline`.
    ///
    /// ```swift
    /// let cancel = clock.schedule(at: clock.now.advanced(by: .seconds(1))) { print("fired") }
    /// cancel()   // stopped: nothing prints; harmless after it fired
    /// ```
    ///
    /// - Returns: a function that stops the timer if it has not fired.
    func schedule(at deadline: Instant, _ action: @escaping @Sendable () async -> Void) -> @Sendable () -> Void
}

extension SyncClock {
    /// Runs `action` in a task that sleeps on this clock until `deadline`;
    /// cancelling cancels the sleep.
    ///
    /// ```swift
    /// let clock = ContinuousClock()
    /// let cancel = clock.schedule(at: clock.now.advanced(by: .milliseconds(500))) { print("half a second later") }
    /// ```
    public func schedule(at deadline: Instant, _ action: @escaping @Sendable () async -> Void) -> @Sendable () -> Void {
        let task = Task {
            do { try await sleep(until: deadline, tolerance: nil) } catch { return }
            await action()
        }
        return { task.cancel() }
    }

    /// The wall time in whole milliseconds since the Unix epoch, as the
    /// journal stores `queuedAt`: rounded to the nearest, so a date made
    /// from whole milliseconds reads back exactly.
    package var wallTimeMilliseconds: Int64 {
        let milliseconds = (wallTime.timeIntervalSince1970 * 1_000).rounded()
        if let whole = Int64(exactly: milliseconds) { return whole }
        return milliseconds.isNaN ? 0 : milliseconds < 0 ? .min : .max
    }
}

/// The machine's monotonic clock, which keeps counting while the device
/// sleeps: what an app passes to its store and engine (and their default).
extension ContinuousClock: SyncClock {
    /// The machine's wall time (`Date()`).
    ///
    /// ```swift
    /// print(ContinuousClock().wallTime)   // the date and time now
    /// ```
    public var wallTime: Date { Date() }
}

/// A clock whose time is measured from a start the engine can see: every
/// engine on it counts from the same zero, so the package's tests and
/// simulator can compare the engine's times with the clock's.
package protocol SyncClockWithStart: SyncClock {
    /// The instant the clock started at.
    var start: Instant { get }
}

import SyncJournalPlatform
import SyncJournalStore

/// A clock that stands still, so nothing a test checks depends on the
/// machine's time; a test that needs time to pass sets it by hand.
package final class FixedClock: TimeSource, Sendable {
    private let value: Mutex<Int64>

    /// A clock reading `milliseconds` (late 2025 unless told).
    package init(milliseconds: Int64 = 1_764_000_000_000) {
        value = Mutex(milliseconds)
    }

    /// The time it reads.
    package var now: Int64 { value.withLock { $0 } }
    package func nowMilliseconds() -> Int64 { now }
    /// Moves the clock to `milliseconds`.
    package func set(_ milliseconds: Int64) { value.withLock { $0 = milliseconds } }
    /// The clock as a server's time source reads it.
    package var reading: @Sendable () -> Int64 { { [self] in now } }
}

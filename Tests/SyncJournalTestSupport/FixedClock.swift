#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncJournalPlatform
import SyncJournalStore

/// A server's clock that stands still, so nothing a test checks depends on
/// the machine's time; a test that needs time to pass sets it by hand.
package final class FixedClock: Sendable {
    private let value: Mutex<Int64>

    /// A clock reading `milliseconds` (late 2025 unless told).
    package init(milliseconds: Int64 = 1_764_000_000_000) {
        value = Mutex(milliseconds)
    }

    /// The time it reads.
    package var now: Int64 { value.withLock { $0 } }
    /// Moves the clock to `milliseconds`.
    package func set(_ milliseconds: Int64) { value.withLock { $0 = milliseconds } }
    /// The clock as a server's time source reads it.
    package var reading: @Sendable () -> Int64 { { [self] in now } }
}

/// A store's clock in a test: only its wall time matters (the store reads
/// nothing else); its monotonic time is the machine's.
package protocol WallTimeTestClock: SyncClock where Instant == ContinuousClock.Instant {
    /// The wall time, in milliseconds since the Unix epoch.
    func wallTimeMilliseconds() -> Int64
}

extension WallTimeTestClock {
    package var wallTime: Date { Date(timeIntervalSince1970: Double(wallTimeMilliseconds()) / 1_000) }
    package var now: ContinuousClock.Instant { ContinuousClock.now }
    package var minimumResolution: Duration { ContinuousClock().minimumResolution }
    package func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        try await ContinuousClock().sleep(until: deadline, tolerance: tolerance)
    }
}

/// A store's clock whose wall time stands still, so the `queuedAt` stamps a
/// test reads never depend on the machine's time.
package struct StillClock: WallTimeTestClock {
    /// The wall time it reads, in milliseconds since the Unix epoch.
    package let milliseconds: Int64

    /// A clock whose wall time reads `milliseconds` (late 2025 unless told).
    package init(milliseconds: Int64 = 1_764_000_000_000) {
        self.milliseconds = milliseconds
    }

    package func wallTimeMilliseconds() -> Int64 { milliseconds }
}

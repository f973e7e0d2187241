import SyncJournalProtocol
import SyncJournalPlatform

/// Where the store reads the time it stamps on edits (`queuedAt`). Injected,
/// so tests and the simulator never depend on the machine's clock. The time
/// is informational: it never becomes a base or a cursor.
public protocol TimeSource: Sendable {
    /// Milliseconds since the Unix epoch.
    func nowMilliseconds() -> Int64
}

/// The machine's real-time clock.
public struct SystemTimeSource: TimeSource {
    /// The real clock.
    public init() {}

    public func nowMilliseconds() -> Int64 { SystemClock.wallClockMilliseconds() }
}

import SyncJournalPlatform

/// When a storage with a tombstone retention purges: before a pull, at most
/// once a minute, so a busy server does not scan for old tombstones on every
/// request. Shared by the SQLite and PostgreSQL storages.
struct TombstoneRetentionSchedule: ~Copyable, Sendable {
    /// How long tombstones are kept, in server-clock milliseconds.
    let retentionMilliseconds: Int64
    private let lastPurge = Mutex<Int64?>(nil)
    private static let intervalMilliseconds: Int64 = 60_000

    init(retentionMilliseconds: Int64) {
        self.retentionMilliseconds = max(0, retentionMilliseconds)
    }

    /// The stamp to purge tombstones older than, when a purge is due at
    /// `clock` (and counts as done from now); `nil` when it is not due.
    func purgeLimit(at clock: Int64) -> Int64? {
        let due = lastPurge.withLock { last -> Bool in
            if let previous = last, clock >= previous, clock - previous < Self.intervalMilliseconds { return false }
            last = clock
            return true
        }
        guard due else { return nil }
        let (limit, overflow) = clock.subtractingReportingOverflow(retentionMilliseconds)
        return overflow ? nil : limit
    }
}

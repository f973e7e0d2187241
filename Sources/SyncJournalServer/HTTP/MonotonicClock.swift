import SyncJournalPlatform

/// Milliseconds of `CLOCK_MONOTONIC`, for timeouts (the wall clock may jump).
enum MonotonicClock {
    static func milliseconds() -> Int64 { SystemClock.monotonicMilliseconds() }
}

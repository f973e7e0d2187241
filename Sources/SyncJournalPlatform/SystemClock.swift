#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The machine's clocks, from `clock_gettime(2)`.
package enum SystemClock {
    /// Milliseconds since the Unix epoch (`CLOCK_REALTIME`): for time stamps
    /// people read; it may jump, so never for timeouts.
    package static func wallClockMilliseconds() -> Int64 {
        let time = read(CLOCK_REALTIME)
        return Int64(time.tv_sec) * 1_000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// Nanoseconds of `CLOCK_MONOTONIC`, from an arbitrary start: for
    /// timeouts and measurements (it never jumps).
    package static func monotonicNanoseconds() -> Int64 {
        let time = read(CLOCK_MONOTONIC)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Nanoseconds of CPU time this process has used, on all its threads
    /// (`CLOCK_PROCESS_CPUTIME_ID`): what a benchmark costs on a machine where
    /// other processes stretch the wall-clock time.
    package static func processCPUNanoseconds() -> Int64 {
        let time = read(CLOCK_PROCESS_CPUTIME_ID)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Milliseconds of `CLOCK_MONOTONIC`.
    package static func monotonicMilliseconds() -> Int64 { monotonicNanoseconds() / 1_000_000 }

    /// Blocks the calling thread for about `microseconds` (a sampling pause,
    /// never a way to wait for another thread).
    package static func pause(microseconds: UInt32) {
        _ = usleep(microseconds)
    }

    private static func read(_ clock: clockid_t) -> timespec {
        var time = timespec()
        clock_gettime(clock, &time)
        return time
    }
}

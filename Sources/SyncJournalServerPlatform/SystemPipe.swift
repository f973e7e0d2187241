#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SyncJournalPlatform

/// A pipe used to wake threads blocked in `poll`: both ends close-on-exec
/// and non-blocking.
package enum SystemPipe {
    /// Creates the pipe. (`pipe2` is not exported everywhere: the flags are
    /// set right after.)
    package static func make() throws(Errno) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .current }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        return (ends[0], ends[1])
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SyncJournalPlatform

/// The process's limit on open descriptors (`RLIMIT_NOFILE`): a server
/// holding thousands of connections raises its soft limit to the hard one.
///
/// ```swift
/// let limit = OpenFileLimit.raiseToHardLimit()
/// print("open files: \(limit.soft) of \(limit.hard)")
/// ```
package struct OpenFileLimit: Sendable, Hashable {
    /// The limit in force.
    package var soft: UInt64
    /// The most the soft limit may be raised to without privileges.
    package var hard: UInt64

    /// The current limits (`getrlimit`), or `nil` if they cannot be read.
    package static func current() -> OpenFileLimit? {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return nil }
        return OpenFileLimit(soft: UInt64(limit.rlim_cur), hard: UInt64(limit.rlim_max))
    }

    /// Raises the soft limit to the hard one (on Darwin, at most `OPEN_MAX`,
    /// which `setrlimit` requires there) and returns the limits then in force.
    @discardableResult
    package static func raiseToHardLimit() -> OpenFileLimit? {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return nil }
        #if canImport(Darwin)
        let ceiling = min(limit.rlim_max, rlim_t(OPEN_MAX))
        #else
        let ceiling = limit.rlim_max
        #endif
        if limit.rlim_cur < ceiling {
            limit.rlim_cur = ceiling
            _ = setrlimit(resource, &limit)
        }
        return current()
    }

    #if canImport(Glibc)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension SystemFile {
    /// The durability barrier: returns once the file's data written so far
    /// is on stable storage, so a power cut cannot lose it.
    ///
    /// - Linux: `fdatasync(2)`. It flushes the data and the metadata needed
    ///   to read it back (the size), and the kernel sends the drive a cache
    ///   flush.
    /// - Apple platforms: `fcntl(fd, F_FULLFSYNC)`. There `fsync(2)` only
    ///   hands the data to the drive, whose write cache may still lose it on
    ///   power loss; `F_FULLFSYNC` also asks the drive to flush that cache.
    ///   SQLite makes the same choice. Some file systems (network and FUSE
    ///   ones, some external disks) do not support `F_FULLFSYNC` and fail it
    ///   with `ENOTSUP`, `EOPNOTSUPP`, `ENOTTY` or `EINVAL`; only then the
    ///   barrier falls back to `fsync`, the strongest call left.
    ///
    /// Any other failure is final and never retried, on every platform: the
    /// kernel may already have dropped the dirty pages, and a second call
    /// could report success for data that is gone.
    package static func durabilityBarrier(_ fd: Int32) throws(Errno) {
        #if canImport(Darwin)
        if fcntl(fd, F_FULLFSYNC) == 0 { return }
        let code = Errno.current
        guard fullSyncUnsupported(code) else { throw code }
        try fsync(fd)
        #else
        if fdatasync(fd) != 0 { throw .current }
        #endif
    }

    /// Whether `code`, from `F_FULLFSYNC`, means the file system does not
    /// offer it (so `fsync` is the barrier) rather than that the flush failed.
    package static func fullSyncUnsupported(_ code: Errno) -> Bool {
        code == .notSupported || code == .operationNotSupported || code == .notTypewriter || code == .invalidArgument
    }
}

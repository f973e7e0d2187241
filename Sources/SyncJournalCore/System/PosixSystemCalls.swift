#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The real system calls.
public struct PosixSystemCalls: SystemCalls {
    /// Creates the real system-call layer.
    public init() {}

    /// Runs `body` until it does not fail with `EINTR`.
    @inline(__always)
    private func retryingEINTR<T: BinaryInteger>(_ call: SystemCall, _ path: String? = nil, _ body: () -> T) throws(SystemError) -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw SystemError(call: call, errno: code, path: path)
        }
    }

    public func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor {
        var flags: Int32 = O_CLOEXEC
        flags |= options.contains(.readWrite) ? O_RDWR : O_RDONLY
        if options.contains(.create) { flags |= O_CREAT }
        if options.contains(.exclusive) { flags |= O_EXCL }
        if options.contains(.truncate) { flags |= O_TRUNC }
        if options.contains(.directory) { flags |= O_DIRECTORY }
        let fd = try retryingEINTR(.open, path) { Glibc.open(path, flags, mode_t(mode)) }
        return FileDescriptor(rawValue: fd)
    }

    public func close(_ fd: FileDescriptor) throws(SystemError) {
        if Glibc.close(fd.rawValue) != 0 {
            let code = errno
            if code == EINTR { return }  // the descriptor is released even so
            throw SystemError(call: .close, errno: code)
        }
    }

    public func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try retryingEINTR(.pread) { Glibc.pread(fd.rawValue, base, buffer.count, off_t(offset)) }
    }

    public func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try retryingEINTR(.pwrite) { Glibc.pwrite(fd.rawValue, base, buffer.count, off_t(offset)) }
    }

    public func fdatasync(_ fd: FileDescriptor) throws(SystemError) {
        // EINTR is not expected from fdatasync on Linux; any failure is final.
        if Glibc.fdatasync(fd.rawValue) != 0 { throw SystemError(call: .fdatasync, errno: errno) }
    }

    public func fsync(_ fd: FileDescriptor) throws(SystemError) {
        if Glibc.fsync(fd.rawValue) != 0 { throw SystemError(call: .fsync, errno: errno) }
    }

    public func ftruncate(_ fd: FileDescriptor, _ length: Int64) throws(SystemError) {
        _ = try retryingEINTR(.ftruncate) { Glibc.ftruncate(fd.rawValue, off_t(length)) }
    }

    public func fileSize(_ fd: FileDescriptor) throws(SystemError) -> Int64 {
        var info = stat()
        if Glibc.fstat(fd.rawValue, &info) != 0 { throw SystemError(call: .fstat, errno: errno) }
        return Int64(info.st_size)
    }

    public func rename(_ from: String, _ to: String) throws(SystemError) {
        if Glibc.rename(from, to) != 0 { throw SystemError(call: .rename, errno: errno, path: from) }
    }

    public func unlink(_ path: String) throws(SystemError) {
        if Glibc.unlink(path) != 0 { throw SystemError(call: .unlink, errno: errno, path: path) }
    }

    public func lockExclusive(_ fd: FileDescriptor) throws(SystemError) {
        // A POSIX record lock on the whole file, not flock(2): flock locks
        // belong to the open file description, which a child process spawned
        // at that moment inherits until it execs, so a journal just closed
        // could still look locked. Record locks are not inherited. They do not
        // exclude a second open in the same process; JournalWriter keeps its
        // own registry for that.
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 0
        _ = try retryingEINTR(.flock) { withUnsafeMutablePointer(to: &lock) { systemFcntl(fd.rawValue, F_SETLK, $0) } }
    }
}

/// `fcntl(2)` with a lock argument, outside the type so no method shadows it.
private func systemFcntl(_ fd: Int32, _ command: Int32, _ lock: UnsafeMutablePointer<flock>) -> Int32 {
    fcntl(fd, command, lock)
}

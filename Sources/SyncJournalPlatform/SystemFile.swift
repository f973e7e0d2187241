#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the POSIX file calls on raw descriptor numbers: each
/// retries `EINTR` where that is safe and throws the ``Errno`` the call left.
package enum SystemFile {
    /// Runs `body` until it does not fail with `EINTR`; a negative result
    /// throws the `errno` it left.
    @inline(__always)
    package static func retryingInterrupts<T: BinaryInteger>(_ body: () -> T) throws(Errno) -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = Errno.current
            if code == .interrupted { continue }
            throw code
        }
    }

    /// `open(2)`; a created file gets permissions `mode`.
    package static func open(_ path: String, _ flags: FileOpenFlags, mode: UInt32 = 0) throws(Errno) -> Int32 {
        let bits = flags.platformFlags
        return try retryingInterrupts { systemOpen(path, bits, mode_t(mode)) }
    }

    /// `close(2)`, never retried: after `EINTR` the descriptor is already
    /// released on Linux, and a retry could close a descriptor another
    /// thread just opened. `EINTR` counts as success.
    package static func close(_ fd: Int32) throws(Errno) {
        if systemClose(fd) != 0 {
            let code = Errno.current
            if code == .interrupted { return }
            throw code
        }
    }

    /// One `read(2)` into `buffer`; 0 at end of file.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try retryingInterrupts { systemRead(fd, base, buffer.count) }
    }

    /// One `write(2)` from `buffer`; returns the bytes written, which may be fewer.
    package static func write(_ fd: Int32, from buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try retryingInterrupts { systemWrite(fd, base, buffer.count) }
    }

    /// Writes every byte of `bytes` with `write(2)`, finishing short writes;
    /// a write that makes no progress throws ``Errno/ioError``.
    package static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) throws(Errno) {
        let array = Array(bytes)
        var done = 0
        while done < array.count {
            let result: Result<Int, Errno> = array.withUnsafeBytes { buffer in
                do throws(Errno) { return .success(try write(fd, from: UnsafeRawBufferPointer(rebasing: buffer[done...]))) } catch { return .failure(error) }
            }
            let count = try result.get()
            if count <= 0 { throw .ioError }
            done += count
        }
    }

    /// Every byte of the file at `path`, read with `read(2)` to its end.
    package static func readAll(_ path: String) throws(Errno) -> [UInt8] {
        let fd = try open(path, .readOnly)
        defer { try? close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let result: Result<Int, Errno> = buffer.withUnsafeMutableBytes { chunk in
                do throws(Errno) { return .success(try read(fd, into: chunk)) } catch { return .failure(error) }
            }
            let count = try result.get()
            if count == 0 { return bytes }
            bytes.append(contentsOf: buffer[0..<count])
        }
    }

    /// One `pread(2)` at `offset`; 0 at end of file.
    package static func pread(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try retryingInterrupts { systemPread(fd, base, buffer.count, off_t(offset)) }
    }

    /// One `pwrite(2)` at `offset`; returns the bytes written, which may be fewer.
    package static func pwrite(_ fd: Int32, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try retryingInterrupts { systemPwrite(fd, base, buffer.count, off_t(offset)) }
    }

    /// `ftruncate(2)`.
    package static func truncate(_ fd: Int32, to length: Int64) throws(Errno) {
        _ = try retryingInterrupts { systemFtruncate(fd, off_t(length)) }
    }

    /// The size of the open file, from `fstat(2)`.
    package static func size(_ fd: Int32) throws(Errno) -> Int64 {
        var info = stat()
        if fstat(fd, &info) != 0 { throw .current }
        return Int64(info.st_size)
    }

    /// `fsync(2)`: file data and metadata reach the device; also the way to
    /// make a create, rename or unlink in a directory durable (on the
    /// directory's descriptor). A failure is final; never retried.
    package static func fsync(_ fd: Int32) throws(Errno) {
        if systemFsync(fd) != 0 { throw .current }
    }

    /// `rename(2)`.
    package static func rename(_ from: String, to: String) throws(Errno) {
        if systemRename(from, to) != 0 { throw .current }
    }

    /// `link(2)`: `new` names the file `existing` names.
    package static func link(_ existing: String, to new: String) throws(Errno) {
        if systemLink(existing, new) != 0 { throw .current }
    }

    /// `unlink(2)`.
    package static func unlink(_ path: String) throws(Errno) {
        if systemUnlink(path) != 0 { throw .current }
    }

    /// An exclusive, non-blocking POSIX record lock on the whole file
    /// (`fcntl(F_SETLK)` with `F_WRLCK`). Throws ``Errno/wouldBlock`` or
    /// ``Errno/accessDenied`` when another process holds it.
    ///
    /// A record lock, not `flock(2)`: `flock` locks belong to the open file
    /// description, which a child process spawned at that moment inherits
    /// until it execs, so a file just closed could still look locked. Record
    /// locks are not inherited. They do not exclude a second open in the same
    /// process; callers keep their own registry for that.
    package static func lockExclusive(_ fd: Int32) throws(Errno) {
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 0
        _ = try retryingInterrupts { withUnsafeMutablePointer(to: &lock) { systemFcntlLock(fd, F_SETLK, $0) } }
    }
}

// The C calls under names no wrapper shadows.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func systemClose(_ fd: Int32) -> Int32 { close(fd) }
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { read(fd, buffer, count) }
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(fd, buffer, count) }
private func systemPread(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, _ offset: off_t) -> Int {
    pread(fd, buffer, count, offset)
}
private func systemPwrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int, _ offset: off_t) -> Int {
    pwrite(fd, buffer, count, offset)
}
private func systemFtruncate(_ fd: Int32, _ length: off_t) -> Int32 { ftruncate(fd, length) }
private func systemFsync(_ fd: Int32) -> Int32 { fsync(fd) }
private func systemRename(_ from: String, _ to: String) -> Int32 { rename(from, to) }
private func systemUnlink(_ path: String) -> Int32 { unlink(path) }
private func systemLink(_ existing: String, _ new: String) -> Int32 { link(existing, new) }
private func systemFcntlLock(_ fd: Int32, _ command: Int32, _ lock: UnsafeMutablePointer<flock>) -> Int32 {
    fcntl(fd, command, lock)
}

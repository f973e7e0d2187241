import SyncJournalPlatform

/// Loops over ``SystemCalls`` that finish short reads and writes and name the
/// file in every error. All journal code reads and writes through these.
package struct FileIO: Sendable {
    /// The system-call layer underneath.
    package let system: any SystemCalls

    /// Wraps `system`.
    package init(_ system: any SystemCalls) { self.system = system }

    /// Writes every byte of `bytes` at `offset`, finishing short writes.
    /// A write that makes no progress is reported as `EIO`.
    package func writeAll(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer, at offset: Int64, path: String) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[done...])
            let n: Int
            do { n = try system.pwrite(fd, from: rest, at: offset + Int64(done)) } catch { throw error.at(path) }
            if n <= 0 { throw SystemError(call: .pwrite, code: .ioError, path: path) }
            done += n
        }
    }

    /// Writes every byte of `bytes` at `offset`.
    package func writeAll(_ fd: FileDescriptor, _ bytes: [UInt8], at offset: Int64, path: String) throws(SystemError) {
        let result: Result<Void, SystemError> = bytes.withUnsafeBytes { buffer in
            do throws(SystemError) { try writeAll(fd, buffer, at: offset, path: path); return .success(()) } catch { return .failure(error) }
        }
        try result.get()
    }

    /// Reads up to `count` bytes at `offset`, stopping early only at end of file.
    package func read(_ fd: FileDescriptor, count: Int, at offset: Int64, path: String) throws(SystemError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        let result: Result<Int, SystemError> = bytes.withUnsafeMutableBytes { buffer in
            while done < count {
                let rest = UnsafeMutableRawBufferPointer(rebasing: buffer[done...])
                let n: Int
                do throws(SystemError) { n = try system.pread(fd, into: rest, at: offset + Int64(done)) } catch { return .failure(error.at(path)) }
                if n == 0 { break }
                done += n
            }
            return .success(done)
        }
        let got = try result.get()
        if got < count { bytes.removeLast(count - got) }
        return bytes
    }

    /// `fsync`s the directory at `path`, so a create, rename or unlink in it is durable.
    package func syncDirectory(_ path: String) throws(SystemError) {
        let fd: FileDescriptor
        do { fd = try system.open(path, [.readOnly, .directory], 0) } catch { throw error.at(path) }
        defer { try? system.close(fd) }
        do { try system.fsync(fd) } catch { throw error.at(path) }
    }

    /// The directory part of `path` (`.` when there is none).
    package static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }
}

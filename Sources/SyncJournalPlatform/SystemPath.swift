#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Calls on paths rather than open descriptors.
package enum SystemPath {
    /// The canonical absolute path (symbolic links and `..` resolved) of an
    /// existing file, from `realpath(3)`.
    package static func canonical(_ path: String) throws(Errno) -> String {
        guard let resolved = realpath(path, nil) else { throw .current }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `mkdir(2)` with permissions `mode`.
    package static func makeDirectory(_ path: String, mode: UInt32 = 0o700) throws(Errno) {
        if mkdir(path, mode_t(mode)) != 0 { throw .current }
    }

    /// `rmdir(2)`: removes an empty directory.
    package static func removeDirectory(_ path: String) throws(Errno) {
        if rmdir(path) != 0 { throw .current }
    }

    /// Creates a fresh directory from `template`, whose name ends in
    /// `XXXXXX` (`mkdtemp(3)`), and returns its path.
    package static func makeTemporaryDirectory(template: String) throws(Errno) -> String {
        var bytes = Array(template.utf8CString)
        let made = bytes.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
        guard made != nil else { throw .current }
        return String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The size in bytes of the file at `path`, from `stat(2)`.
    package static func size(_ path: String) throws(Errno) -> Int64 {
        var info = stat()
        if stat(path, &info) != 0 { throw .current }
        return Int64(info.st_size)
    }

    /// The names in the directory at `path` (`opendir`/`readdir`), without
    /// `.` and `..`, in no particular order.
    package static func entries(of path: String) throws(Errno) -> [String] {
        guard let directory = opendir(path) else { throw .current }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                String(cString: UnsafeRawPointer(pointer).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// `unlink(2)`.
    package static func unlink(_ path: String) throws(Errno) {
        try SystemFile.unlink(path)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How ``SystemFile/open(_:_:mode:)`` opens a file. Every descriptor is
/// opened close-on-exec, so a child process never inherits a journal.
package struct FileOpenFlags: OptionSet, Sendable, Hashable {
    /// Platform-independent bits, mapped to `O_*` flags by ``platformFlags``.
    package let rawValue: Int32
    /// Creates flags from bits.
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// `O_RDONLY` (the default when neither write flag is given).
    package static let readOnly = FileOpenFlags(rawValue: 1 << 0)
    /// `O_WRONLY`.
    package static let writeOnly = FileOpenFlags(rawValue: 1 << 1)
    /// `O_RDWR`.
    package static let readWrite = FileOpenFlags(rawValue: 1 << 2)
    /// `O_CREAT`.
    package static let create = FileOpenFlags(rawValue: 1 << 3)
    /// `O_EXCL`: with ``create``, fail if the file exists.
    package static let exclusive = FileOpenFlags(rawValue: 1 << 4)
    /// `O_TRUNC`.
    package static let truncate = FileOpenFlags(rawValue: 1 << 5)
    /// `O_DIRECTORY`: fail unless the path is a directory.
    package static let directory = FileOpenFlags(rawValue: 1 << 6)

    /// The `open(2)` flag bits, including `O_CLOEXEC`.
    package var platformFlags: Int32 {
        var flags: Int32 = O_CLOEXEC
        if contains(.readWrite) {
            flags |= O_RDWR
        } else if contains(.writeOnly) {
            flags |= O_WRONLY
        } else {
            flags |= O_RDONLY
        }
        if contains(.create) { flags |= O_CREAT }
        if contains(.exclusive) { flags |= O_EXCL }
        if contains(.truncate) { flags |= O_TRUNC }
        if contains(.directory) { flags |= O_DIRECTORY }
        return flags
    }
}

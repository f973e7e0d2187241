#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The system call a ``SystemError`` came from.
public enum SystemCall: String, Sendable, Hashable, CaseIterable {
    case open, close, pread, pwrite, fsync, fdatasync, ftruncate, fstat, rename, unlink, flock, fallocate
}

/// A failed system call: which call, the `errno` it left, and the path it was
/// working on when one is known.
public struct SystemError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call that failed.
    public var call: SystemCall
    /// The `errno` value it set.
    public var errno: Int32
    /// The file it was working on, if known.
    public var path: String?

    /// Creates an error for `call` failing with `errno` on `path`.
    public init(call: SystemCall, errno: Int32, path: String? = nil) {
        self.call = call
        self.errno = errno
        self.path = path
    }

    /// The same error, naming `path`.
    public func at(_ path: String) -> SystemError {
        var copy = self
        if copy.path == nil { copy.path = path }
        return copy
    }

    /// `strerror` text for ``errno``.
    public var message: String { String(cString: strerror(errno)) }

    /// A one-line explanation, such as `fdatasync(/tmp/j): Input/output error (errno 5)`.
    public var description: String {
        "\(call.rawValue)(\(path ?? "?")): \(message) (errno \(errno))"
    }
}

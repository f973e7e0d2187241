import SyncJournalPlatform

/// The system call a ``SystemError`` came from.
public enum SystemCall: String, Sendable, Hashable, CaseIterable {
    case open, close, pread, pwrite, fsync, fdatasync, ftruncate, fstat, rename, unlink, flock, fallocate
}

/// A failed system call: which call, the `errno` it left, and the path it was
/// working on when one is known.
public struct SystemError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call that failed.
    public var call: SystemCall
    /// The `errno` value it set (the platform's number; ``description``
    /// prints its name, such as `EAGAIN`).
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

    /// The same error with its `errno` given by name.
    package init(call: SystemCall, code: Errno, path: String? = nil) {
        self.init(call: call, errno: code.rawValue, path: path)
    }

    /// ``errno`` as a named value, for comparisons that hold on every platform.
    package var code: Errno { Errno(rawValue: errno) }

    /// `strerror` text for ``errno``.
    public var message: String { code.message }

    /// A one-line explanation, such as `fdatasync(/tmp/j): Input/output error (EIO)`.
    public var description: String {
        "\(call.rawValue)(\(path ?? "?")): \(message) (\(code))"
    }
}

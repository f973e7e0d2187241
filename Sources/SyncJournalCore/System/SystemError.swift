import SyncJournalPlatform

/// The system call a ``SystemError`` came from.
public enum SystemCall: String, Sendable, Hashable, CaseIterable {
    /// Opening or creating a file.
    case open
    /// Closing a descriptor.
    case close
    /// Reading at an offset.
    case pread
    /// Writing at an offset.
    case pwrite
    /// Syncing a file or directory with its metadata (used for directories after a rename).
    case fsync
    /// The durability barrier: `fdatasync` on Linux, `F_FULLFSYNC` on Apple platforms. A failure is final.
    case fdatasync
    /// Setting a file's length (cutting a torn tail, undoing a failed write).
    case ftruncate
    /// Reading a file's size.
    case fstat
    /// Renaming a file (the checkpoint's atomic swap).
    case rename
    /// Removing a file.
    case unlink
    /// Giving a file a second name (an attachment moved between directories without ever having none).
    case link
    /// Making a directory.
    case mkdir
    /// Taking the journal's writer lock.
    case flock
    /// Reserving space ahead of the writer (preallocation).
    case fallocate
    /// Setting a new file's data protection class (``FileProtection``; Apple platforms).
    case fileProtection
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
    package init(call: SystemCall, errno: Int32, path: String? = nil) {
        self.call = call
        self.errno = errno
        self.path = path
    }

    /// The same error, naming `path`.
    package func at(_ path: String) -> SystemError {
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

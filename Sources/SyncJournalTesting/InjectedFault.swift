import SyncJournalCore
import SyncJournalPlatform

/// What a ``FaultInjectingSystemCalls`` does instead of (or to) a system call
/// when a ``FaultRule`` fires.
///
/// ```swift
/// faults.inject(.fail(errno: ENOSPC), into: .pwrite, on: .path(journalPath))
/// faults.inject(.partialTransfer(bytes: 7), into: .pwrite, when: .everyCall)
/// faults.inject(.tornWrite(bytes: 10, errno: EIO), into: .pwrite)
/// ```
public enum InjectedFault: Sendable, Hashable, CustomStringConvertible {
    /// The call does nothing and throws a ``SystemError`` with `errno`.
    ///
    /// A `close` still releases the descriptor before throwing, as Linux
    /// does; every other call leaves the file untouched.
    case fail(errno: Int32)

    /// A `pread` or `pwrite` transfers only its first `bytes` bytes (fewer
    /// when the buffer is smaller) and returns that count, as the kernel may
    /// do. The caller's loop must finish the transfer. Valid only for
    /// ``SystemCall/pread`` and ``SystemCall/pwrite``.
    case partialTransfer(bytes: Int)

    /// A `pwrite` (or `pread`) transfers its first `bytes` bytes (fewer when
    /// the buffer is smaller) and then throws `errno`, so the file holds a
    /// torn prefix the caller was never told about. On any other call it
    /// behaves like ``fail(errno:)``.
    case tornWrite(bytes: Int, errno: Int32)

    /// `ENOSPC`: no space left on the device.
    public static let noSpace = InjectedFault.fail(errno: Errno.noSpace.rawValue)
    /// `EIO`: an input/output error.
    public static let ioError = InjectedFault.fail(errno: Errno.ioError.rawValue)

    /// The `errno` the fault throws, `nil` for ``partialTransfer(bytes:)``.
    public var errno: Int32? {
        switch self {
        case .fail(let errno), .tornWrite(_, let errno): return errno
        case .partialTransfer: return nil
        }
    }

    /// A short explanation, such as `fail(errno 5)`.
    public var description: String {
        switch self {
        case .fail(let errno): return "fail(errno \(errno))"
        case .partialTransfer(let bytes): return "partial transfer of \(bytes) bytes"
        case .tornWrite(let bytes, let errno): return "torn write of \(bytes) bytes, then errno \(errno)"
        }
    }
}

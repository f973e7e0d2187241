#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An `errno` value with a name, so code compares against `.wouldBlock`
/// instead of a number that differs between platforms (`EAGAIN` is 11 on
/// Linux and 35 on Darwin).
package struct Errno: RawRepresentable, Error, Sendable, Hashable, CustomStringConvertible {
    /// The platform's number for the error.
    package let rawValue: Int32

    /// Wraps a platform `errno` number.
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's `errno` right now: read it straight after the call
    /// that failed, before anything else can overwrite it.
    package static var current: Errno { Errno(rawValue: errno) }

    /// The platform's text for the error (`strerror`), such as `Input/output error`.
    package var message: String { String(cString: strerror(rawValue)) }

    /// The symbolic name, such as `EAGAIN`, or `errno N` for a number this
    /// table does not know.
    package var description: String { name ?? "errno \(rawValue)" }

    /// `EPERM`: operation not permitted.
    package static let notPermitted = Errno(rawValue: EPERM)
    /// `ENOENT`: no such file or directory.
    package static let noSuchFile = Errno(rawValue: ENOENT)
    /// `EINTR`: a signal interrupted the call before it did anything.
    package static let interrupted = Errno(rawValue: EINTR)
    /// `EIO`: the device reported an input/output error.
    package static let ioError = Errno(rawValue: EIO)
    /// `EBADF`: not an open descriptor (or not open for this access).
    package static let badDescriptor = Errno(rawValue: EBADF)
    /// `EAGAIN` (the same number as `EWOULDBLOCK`): try again; for a lock, another holder has it.
    package static let wouldBlock = Errno(rawValue: EAGAIN)
    /// `ENOMEM`: out of memory.
    package static let noMemory = Errno(rawValue: ENOMEM)
    /// `EACCES`: permission denied; for a record lock, another holder has it.
    package static let accessDenied = Errno(rawValue: EACCES)
    /// `EEXIST`: the file exists.
    package static let fileExists = Errno(rawValue: EEXIST)
    /// `ENOTDIR`: a path component is not a directory.
    package static let notDirectory = Errno(rawValue: ENOTDIR)
    /// `EISDIR`: the path is a directory.
    package static let isDirectory = Errno(rawValue: EISDIR)
    /// `EINVAL`: an argument is invalid.
    package static let invalidArgument = Errno(rawValue: EINVAL)
    /// `ENFILE`: the system has too many open files.
    package static let systemFileLimit = Errno(rawValue: ENFILE)
    /// `EMFILE`: this process has too many open files.
    package static let processFileLimit = Errno(rawValue: EMFILE)
    /// `EFBIG`: the file would grow past its limit.
    package static let fileTooLarge = Errno(rawValue: EFBIG)
    /// `ENOSPC`: no space left on the device.
    package static let noSpace = Errno(rawValue: ENOSPC)
    /// `EROFS`: the file system is read-only.
    package static let readOnlyFileSystem = Errno(rawValue: EROFS)
    /// `EPIPE`: the other end of a pipe or socket is closed.
    package static let brokenPipe = Errno(rawValue: EPIPE)
    /// `ENOTSUP`: the operation is not supported (here: by this file system).
    package static let notSupported = Errno(rawValue: ENOTSUP)
    /// `EOPNOTSUPP`: the operation is not supported on this socket or file
    /// (the same number as `ENOTSUP` on Linux, a different one on Darwin).
    package static let operationNotSupported = Errno(rawValue: EOPNOTSUPP)
    /// `ENOTTY`: the control operation does not apply to this kind of file.
    package static let notTypewriter = Errno(rawValue: ENOTTY)
    /// `EADDRINUSE`: the address is already in use.
    package static let addressInUse = Errno(rawValue: EADDRINUSE)
    /// `EADDRNOTAVAIL`: the address is not available on this machine.
    package static let addressNotAvailable = Errno(rawValue: EADDRNOTAVAIL)
    /// `ECONNABORTED`: a connection was aborted before it was accepted.
    package static let connectionAborted = Errno(rawValue: ECONNABORTED)
    /// `ECONNRESET`: the peer reset the connection.
    package static let connectionReset = Errno(rawValue: ECONNRESET)
    /// `ECONNREFUSED`: nothing listens at the address.
    package static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    /// `ETIMEDOUT`: the operation timed out.
    package static let timedOut = Errno(rawValue: ETIMEDOUT)
    /// `EALREADY`: the operation is already under way.
    package static let alreadyInProgress = Errno(rawValue: EALREADY)
    /// `EPROTO`: a protocol error (an accepted connection failed early).
    package static let protocolError = Errno(rawValue: EPROTO)
    /// `EDQUOT`: the user's disk quota is exceeded.
    package static let quotaExceeded = Errno(rawValue: EDQUOT)
    /// `ENOTEMPTY`: the directory is not empty.
    package static let directoryNotEmpty = Errno(rawValue: ENOTEMPTY)
    /// `ENOSYS`: the call is not implemented.
    package static let notImplemented = Errno(rawValue: ENOSYS)
}

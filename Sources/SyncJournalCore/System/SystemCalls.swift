/// The small set of POSIX calls every journal file access goes through.
///
/// Each method is one system call (``PosixSystemCalls`` retries `EINTR` where
/// that is safe, and never for `close`). Loops that finish short reads and
/// writes live in ``FileIO``, above this seam, so a fault injector can return
/// short counts, `ENOSPC`, `EIO` or torn writes from any single call.
package protocol SystemCalls: Sendable {
    /// `open(2)`; files are created with `mode`.
    func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor
    /// `close(2)`. Not retried on `EINTR`: on Linux the descriptor is already gone.
    func close(_ fd: FileDescriptor) throws(SystemError)
    /// One `pread(2)`; returns the bytes read, 0 at end of file.
    func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int
    /// One `pwrite(2)`; returns the bytes written, which may be fewer than asked.
    func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int
    /// `fdatasync(2)`. A failure is final; callers never retry it.
    func fdatasync(_ fd: FileDescriptor) throws(SystemError)
    /// `fsync(2)`, also used on directories.
    func fsync(_ fd: FileDescriptor) throws(SystemError)
    /// `ftruncate(2)`.
    func ftruncate(_ fd: FileDescriptor, _ length: Int64) throws(SystemError)
    /// The size of the open file, from `fstat(2)`.
    func fileSize(_ fd: FileDescriptor) throws(SystemError) -> Int64
    /// `rename(2)`.
    func rename(_ from: String, _ to: String) throws(SystemError)
    /// `unlink(2)`.
    func unlink(_ path: String) throws(SystemError)
    /// `link(2)`: `new` becomes a second name of the file `existing` names
    /// (a cross-directory move that a crash can never leave without a name).
    func link(_ existing: String, _ new: String) throws(SystemError)
    /// An exclusive, non-blocking lock on the whole file (`fcntl(F_SETLK)`):
    /// throws `EAGAIN` or `EACCES` if another process holds it.
    func lockExclusive(_ fd: FileDescriptor) throws(SystemError)
    /// A prefix for the keys of this process's writer registry (which keeps a
    /// second writer of the same journal out of one process): empty for the
    /// real file system; a simulated one names itself and its boot, so a
    /// writer abandoned by a simulated crash does not lock out the reopen.
    var lockNamespace: String { get }
    /// `mkdir(2)`, readable and writable by the owner only; `EEXIST` when
    /// something is there already. Make it durable with a sync of the parent.
    func makeDirectory(_ path: String) throws(SystemError)
    /// The names in a directory (`opendir`/`readdir`), without `.` and `..`;
    /// `nil` when this layer cannot list directories (callers then skip
    /// what needs a listing, such as removing old side files).
    func directoryEntries(_ path: String) throws(SystemError) -> [String]?
    /// Gives the file at `path` the data protection class `protection`
    /// (iOS and its siblings); elsewhere, and in simulated file systems, nothing.
    func protect(_ path: String, as protection: FileProtection) throws(SystemError)
}

extension SystemCalls {
    /// The real file system's namespace: none.
    package var lockNamespace: String { "" }

    /// No directories unless a layer makes them.
    package func makeDirectory(_ path: String) throws(SystemError) {
        throw SystemError(call: .mkdir, code: .operationNotSupported, path: path)
    }

    /// No listing unless a layer provides one.
    package func directoryEntries(_ path: String) throws(SystemError) -> [String]? { nil }

    /// No protection classes unless a layer provides them.
    package func protect(_ path: String, as protection: FileProtection) throws(SystemError) {}
}

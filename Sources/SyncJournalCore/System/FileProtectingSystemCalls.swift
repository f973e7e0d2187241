/// System calls that give every file they create a data protection class:
/// the store opens its journal through these when
/// `LocalStore.Options.fileProtection` is set, so the journal, its lock
/// file, checkpoints and side files are all covered, whichever path creates them.
package struct FileProtectingSystemCalls: SystemCalls {
    /// The calls every request goes to.
    package let base: any SystemCalls
    /// The class given to each file opened with `.create`.
    package let protection: FileProtection

    /// `base`, giving the files it creates `protection`.
    package init(_ base: any SystemCalls, protection: FileProtection) {
        self.base = base
        self.protection = protection
    }

    /// Opens the file; one opened with `create` gets the protection class
    /// before anything is written to it (a file that cannot get it is closed
    /// and the open fails: data must not land in a file less protected than asked).
    package func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor {
        let fd = try base.open(path, options, mode)
        guard options.contains(.create) else { return fd }
        do { try base.protect(path, as: protection) } catch {
            try? base.close(fd)
            throw error
        }
        return fd
    }

    package func close(_ fd: FileDescriptor) throws(SystemError) { try base.close(fd) }
    package func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        try base.pread(fd, into: buffer, at: offset)
    }
    package func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        try base.pwrite(fd, from: buffer, at: offset)
    }
    package func fdatasync(_ fd: FileDescriptor) throws(SystemError) { try base.fdatasync(fd) }
    package func fsync(_ fd: FileDescriptor) throws(SystemError) { try base.fsync(fd) }
    package func ftruncate(_ fd: FileDescriptor, _ length: Int64) throws(SystemError) { try base.ftruncate(fd, length) }
    package func fileSize(_ fd: FileDescriptor) throws(SystemError) -> Int64 { try base.fileSize(fd) }
    package func rename(_ from: String, _ to: String) throws(SystemError) { try base.rename(from, to) }
    package func unlink(_ path: String) throws(SystemError) { try base.unlink(path) }
    package func lockExclusive(_ fd: FileDescriptor) throws(SystemError) { try base.lockExclusive(fd) }
    package var lockNamespace: String { base.lockNamespace }
    package func directoryEntries(_ path: String) throws(SystemError) -> [String]? { try base.directoryEntries(path) }
    package func protect(_ path: String, as protection: FileProtection) throws(SystemError) { try base.protect(path, as: protection) }
}

/// System calls stacked on others: a layer changes the few calls it is
/// about (a fault, a held sync, a protection class) and every other call
/// goes to ``base`` unchanged. The pass-through is written once here, so a
/// layer cannot drop a call by forgetting to forward it.
package protocol SystemCallsLayer: SystemCalls {
    /// The calls beneath this layer.
    var base: any SystemCalls { get }
}

extension SystemCallsLayer {
    package func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor {
        try base.open(path, options, mode)
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
    package func link(_ existing: String, _ new: String) throws(SystemError) { try base.link(existing, new) }
    package func lockExclusive(_ fd: FileDescriptor) throws(SystemError) { try base.lockExclusive(fd) }
    package var lockNamespace: String { base.lockNamespace }
    package func makeDirectory(_ path: String) throws(SystemError) { try base.makeDirectory(path) }
    package func directoryEntries(_ path: String) throws(SystemError) -> [String]? { try base.directoryEntries(path) }
    package func protect(_ path: String, as protection: FileProtection) throws(SystemError) { try base.protect(path, as: protection) }
}

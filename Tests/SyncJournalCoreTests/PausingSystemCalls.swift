import Dispatch
import Synchronization
import SyncJournalCore

/// Passes every call through to the real system calls, except that while it
/// is armed the next `fdatasync` stops until ``resume()``: a test can hold the
/// writer's queue busy at a known point without sleeping.
final class PausingSystemCalls: SystemCalls, Sendable {
    private let base = PosixSystemCalls()
    private let armed = Mutex(false)
    private let gate = DispatchSemaphore(value: 0)
    private let entered: AsyncStream<Void>
    private let enteredContinuation: AsyncStream<Void>.Continuation

    init() {
        (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
    }

    /// Makes the next `fdatasync` wait for ``resume()``.
    func pauseNextSync() { armed.withLock { $0 = true } }

    /// Returns once a paused `fdatasync` is waiting.
    func waitUntilPaused() async {
        for await _ in entered { return }
    }

    /// Lets the paused `fdatasync` go on.
    func resume() { gate.signal() }

    func fdatasync(_ fd: FileDescriptor) throws(SystemError) {
        let pause = armed.withLock { armed in
            defer { armed = false }
            return armed
        }
        if pause {
            enteredContinuation.yield()
            gate.wait()
        }
        try base.fdatasync(fd)
    }

    func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor { try base.open(path, options, mode) }
    func close(_ fd: FileDescriptor) throws(SystemError) { try base.close(fd) }
    func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int { try base.pread(fd, into: buffer, at: offset) }
    func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int { try base.pwrite(fd, from: buffer, at: offset) }
    func fsync(_ fd: FileDescriptor) throws(SystemError) { try base.fsync(fd) }
    func ftruncate(_ fd: FileDescriptor, _ length: Int64) throws(SystemError) { try base.ftruncate(fd, length) }
    func fileSize(_ fd: FileDescriptor) throws(SystemError) -> Int64 { try base.fileSize(fd) }
    func rename(_ from: String, _ to: String) throws(SystemError) { try base.rename(from, to) }
    func unlink(_ path: String) throws(SystemError) { try base.unlink(path) }
    func lockExclusive(_ fd: FileDescriptor) throws(SystemError) { try base.lockExclusive(fd) }
}

import Dispatch
import SyncJournalPlatform
import SyncJournalCore

/// Real system calls, except that while armed the next `fdatasync` blocks
/// until the test calls ``release()``: a journal write held at a known point,
/// so a race is staged without sleeping. The block happens on the writer's
/// Dispatch queue, never on the Swift concurrency pool.
///
/// ```swift
/// let held = SyncHoldingSystemCalls()
/// let store = try await LocalStore.open(path: path, options: .init(fileSystem: held.fileSystem))
/// held.holdNextSync()
/// let edit = Task { try await store.create("pin", fields: [:]) }
/// await held.waitUntilHeld()     // the append is written, its sync is held
/// // … stage the race …
/// held.release()
/// ```
///
/// To stop at every sync of a workload in turn (and look at the disk each
/// time), loop on ``nextHeldSync()`` and let the workload call
/// ``finishWaiting()`` when it is done:
///
/// ```swift
/// held.holdNextSync()
/// let work = Task { await workload(); held.finishWaiting() }
/// while await held.nextHeldSync() {
///     // … the batch is written, its fdatasync has not run: look at the disk …
///     held.holdNextSync()
///     held.release()
/// }
/// held.release()   // a sync armed after the last one must not block the close
/// ```
public final class SyncHoldingSystemCalls: SystemCallsLayer, Sendable {
    package let base: any SystemCalls
    private let armed = Mutex(false)
    private let gate = DispatchSemaphore(value: 0)
    /// `true`: a sync is held; `false`: the waiter was told to stop.
    private let entered: AsyncStream<Bool>
    private let enteredContinuation: AsyncStream<Bool>.Continuation

    /// Wraps `base` (the machine's file system by default).
    public convenience init(_ base: FileSystem = .system) {
        self.init(base.calls)
    }

    /// Wraps these system calls.
    package init(_ base: any SystemCalls) {
        self.base = base
        (entered, enteredContinuation) = AsyncStream.makeStream(of: Bool.self)
    }

    /// These held calls as a file system to open a store on.
    public var fileSystem: FileSystem { FileSystem(self) }

    /// Makes the next `fdatasync` wait for ``release()``.
    public func holdNextSync() { armed.withLock { $0 = true } }

    /// Returns once a held `fdatasync` is waiting (or ``finishWaiting()`` was called).
    public func waitUntilHeld() async {
        for await _ in entered { return }
    }

    /// Waits for the next held `fdatasync`: `true` once one is waiting,
    /// `false` once ``finishWaiting()`` was called first (nothing more will be held).
    public func nextHeldSync() async -> Bool {
        for await held in entered { return held }
        return false
    }

    /// Ends a ``nextHeldSync()`` loop: the waiter gets `false` after any sync held before this call.
    public func finishWaiting() { enteredContinuation.yield(false) }

    /// Lets the held `fdatasync` go on.
    public func release() { gate.signal() }

    package func fdatasync(_ fd: FileDescriptor) throws(SystemError) {
        let hold = armed.withLock { armed in
            defer { armed = false }
            return armed
        }
        if hold {
            enteredContinuation.yield(true)
            gate.wait()
        }
        try base.fdatasync(fd)
    }
}

import Dispatch

/// Threads of executors that have shut down, parked for a while so the next
/// ``DedicatedThreadExecutor`` runs on one of them instead of a new thread.
///
/// Every store runs on a thread of its own (and syncs on a second), so a
/// process that opens and closes stores often would otherwise create and
/// end two threads per store: a test suite opens thousands. Reusing them
/// keeps thread creation, a system call that is slow and that a busy
/// machine can stall, off that path.
///
/// ```swift
/// guard ParkedThreads.shared.run({ loop() }) else { ... }   // no thread could be had
/// ```
package final class ParkedThreads: Sendable {
    /// The one set of parked threads of the process.
    package static let shared = ParkedThreads()

    /// How long a parked thread waits for work before it ends.
    let idleLifetime: DispatchTimeInterval
    /// At most this many threads wait at once; a thread finding the set full ends.
    let maximumParked: Int

    /// A thread's mailbox: the work handed to it, and the signal that it arrived.
    private final class Slot: Sendable {
        private let work: Mutex<(@Sendable () -> Void)?>
        let arrived = DispatchSemaphore(value: 0)

        init(_ work: (@Sendable () -> Void)? = nil) { self.work = Mutex(work) }

        func hand(_ body: @escaping @Sendable () -> Void) {
            work.withLock { $0 = body }
            arrived.signal()
        }

        /// The work, which the slot then no longer holds (so what it captured is released once run).
        func take() -> (@Sendable () -> Void)? {
            work.withLock { work in
                defer { work = nil }
                return work
            }
        }
    }

    private let parked = Mutex<[Slot]>([])

    /// A set of its own (tests); the process uses ``shared``: threads parked
    /// for 10 s, at most 16 of them.
    package init(idleLifetime: DispatchTimeInterval = .seconds(10), maximumParked: Int = 16) {
        self.idleLifetime = idleLifetime
        self.maximumParked = max(0, maximumParked)
    }

    /// How many threads are parked now.
    package var parkedCount: Int { parked.withLock { $0.count } }

    /// Runs `body` on a parked thread, or on a new one when none is parked.
    /// `false` only when no thread exists and none could be created.
    package func run(_ body: @escaping @Sendable () -> Void) -> Bool {
        if let slot = parked.withLock({ $0.popLast() }) {
            slot.hand(body)
            return true
        }
        let slot = Slot(body)
        guard let thread = PlatformThread.start({ self.serve(slot) }) else { return false }
        thread.detach()
        return true
    }

    /// A thread's life: run the work, park, run the next work handed over,
    /// until it waits `idleLifetime` with nothing to do (or the set is full).
    private func serve(_ first: Slot) {
        var slot = first
        while true {
            guard let work = slot.take() else { return }
            work()
            slot = Slot()
            let accepted = parked.withLock { parked -> Bool in
                guard parked.count < self.maximumParked else { return false }
                parked.append(slot)
                return true
            }
            guard accepted else { return }
            if slot.arrived.wait(timeout: .now() + idleLifetime) == .timedOut {
                // Leave unless a caller took the slot just now: then its work is on the way.
                let stillParked = parked.withLock { parked -> Bool in
                    guard let index = parked.firstIndex(where: { $0 === slot }) else { return false }
                    parked.remove(at: index)
                    return true
                }
                if stillParked { return }
                slot.arrived.wait()
            }
        }
    }
}

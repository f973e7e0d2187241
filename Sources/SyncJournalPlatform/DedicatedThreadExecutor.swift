import Dispatch

/// A serial executor that runs its jobs, in the order they arrive, on one
/// thread of its own. An actor on it may block (`pwrite`, `fdatasync`)
/// without holding up the Swift concurrency pool, and work it wakes up after
/// such a call runs on the same thread with no hand-over.
///
/// The thread leaves the executor after ``shutdown()`` once the jobs already
/// queued have run, and is parked for the next executor (``ParkedThreads``);
/// the owner must call it (an actor, from its `deinit`), or the thread stays.
package final class DedicatedThreadExecutor: SerialExecutor, @unchecked Sendable {
    // @unchecked: every mutable field is behind `queue`'s lock.

    /// What the thread runs: a job of an actor or task, or plain work.
    private enum Work {
        case job(UnownedJob)
        case work(@Sendable () -> Void)
    }

    private struct Queue {
        var items: [Work] = []
        /// The thread waits on `wake` (set under the lock just before it does).
        var sleeping = false
        var stopping = false
        /// The running thread's identifier, to tell whether a caller is on it.
        var threadIdentifier: UInt = 0
    }

    private let queue = Mutex(Queue())
    private let wake = DispatchSemaphore(value: 0)

    /// Starts the thread: one parked by an executor that shut down, or a new
    /// one. Creating a thread fails only when the process is out of threads
    /// or memory, which no caller can recover from.
    package init(threads: ParkedThreads = .shared) {
        // The thread keeps the executor alive until its loop ends (after `shutdown`).
        guard threads.run({ self.run() }) else {
            preconditionFailure("no thread could be created for an executor")
        }
    }

    /// Runs `job` on the thread, after every job enqueued before it.
    package func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        add(.job(unowned))
    }

    /// Runs `work` on the thread, in order with the jobs (for a callback
    /// from another thread that must run where the actor runs).
    package func perform(_ work: @escaping @Sendable () -> Void) {
        add(.work(work))
    }

    /// Ends the thread once everything queued so far has run.
    package func shutdown() {
        let wakeUp = queue.withLock { queue -> Bool in
            queue.stopping = true
            defer { queue.sleeping = false }
            return queue.sleeping
        }
        if wakeUp { wake.signal() }
    }

    /// Whether the calling thread is this executor's.
    package var isCurrent: Bool {
        let running = queue.withLock { $0.threadIdentifier }
        return running != 0 && running == PlatformThread.currentIdentifier()
    }

    /// Lets `assumeIsolated` accept code that runs on this thread outside a
    /// job (work given to ``perform(_:)``).
    package func checkIsolated() {
        precondition(isCurrent, "not on the executor's thread")
    }

    /// The executor as the runtime refers to it.
    package func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    private func add(_ work: Work) {
        let wakeUp = queue.withLock { queue -> Bool in
            queue.items.append(work)
            defer { queue.sleeping = false }
            return queue.sleeping
        }
        if wakeUp { wake.signal() }
    }

    /// The thread's loop: takes everything queued at once (one lock per
    /// round, not per job) and sleeps only when nothing is left.
    private func run() {
        let reference = asUnownedSerialExecutor()
        queue.withLock { $0.threadIdentifier = PlatformThread.currentIdentifier() }
        var taken: [Work] = []
        while true {
            let stop = queue.withLock { queue -> Bool in
                if queue.items.isEmpty {
                    if queue.stopping { return true }
                    queue.sleeping = true
                } else {
                    swap(&taken, &queue.items)
                }
                return false
            }
            if stop { return }
            if taken.isEmpty {
                wake.wait()
                continue
            }
            for item in taken {
                switch item {
                case .job(let job): job.runSynchronously(on: reference)
                case .work(let work): work()
                }
            }
            taken.removeAll(keepingCapacity: true)
        }
    }
}

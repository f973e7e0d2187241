import Dispatch

/// A serial executor that runs its jobs, in the order they arrive, on a
/// thread of its own. An actor on it may block (`pwrite`, `fdatasync`)
/// without holding up the Swift concurrency pool, and work it wakes up after
/// such a call runs on the same thread with no hand-over.
///
/// Work may also step out of the executor for a long blocking call
/// (``runOutside(_:then:)``): the jobs that arrive meanwhile run on a
/// standby thread, and the caller takes the executor back afterwards on its
/// own thread when no other thread holds it. A store syncs its journal that way: a lone edit is written,
/// synced and acknowledged by one thread, and reads never wait for the sync.
///
/// What it keeps true, each with its test in `DedicatedThreadExecutorTests`:
/// 1. **One holder.** At most one thread runs the executor's work at a time
///    (it holds the executor); the others sleep, each on a semaphore of its
///    own. ``isCurrent`` is true on that thread and on no other.
/// 2. **Arrival order.** Work runs in the order it was enqueued; what the
///    holder had taken but not run when it stepped outside goes back to the
///    front, ahead of anything newer.
/// 3. **Progress while outside.** Work that arrives while the holder is in
///    ``runOutside(_:then:)`` runs meanwhile, on a standby thread.
/// 4. **No hand-over when alone.** If nothing took the executor meanwhile,
///    the caller of ``runOutside(_:then:)`` runs its continuation at once on
///    its own thread; otherwise the continuation waits its turn behind the
///    work that arrived.
/// 5. **Shutdown runs what was queued.** After ``shutdown()`` the work
///    already queued still runs; then the threads leave and are parked for
///    the next executor (``ParkedThreads``). The owner must call it (an
///    actor, from its `deinit`), or the threads stay.
package final class DedicatedThreadExecutor: SerialExecutor, @unchecked Sendable {
    // @unchecked: every mutable field is behind `queue`'s lock, except a
    // slot's `taken` and `next`, which only the thread holding the executor touches.

    /// What the thread runs: a job of an actor or task, or plain work.
    private enum Work {
        case job(UnownedJob)
        case work(@Sendable () -> Void)
    }

    /// One thread serving the executor.
    private final class Slot: @unchecked Sendable {
        /// Signalled once per wait: the executor was handed over, or the thread must leave.
        let wake = DispatchSemaphore(value: 0)
        /// Whether the last signal handed the executor over (under the lock).
        var handed = false
        /// Whether the thread holds the executor (under the lock, or by the thread itself while it holds it).
        var holding = false
        /// The thread's identifier once it runs (under the lock).
        var threadIdentifier: UInt = 0
        /// The work taken from the queue, run in order from `next`; only the
        /// thread holding the executor touches these.
        var taken: [Work] = []
        var next = 0
    }

    private struct Queue {
        var items: [Work] = []
        /// The slot whose thread holds the executor; `nil` only while `items` is empty.
        var owner: Slot?
        /// Threads asleep without the executor.
        var sleepers: [Slot] = []
        var stopping = false
    }

    private let queue = Mutex(Queue())
    private let threads: ParkedThreads

    /// Starts the thread: one parked by an executor that shut down, or a new
    /// one. Creating a thread fails only when the process is out of threads
    /// or memory, which no caller can recover from.
    package init(threads: ParkedThreads = .shared) {
        self.threads = threads
        let first = Slot()
        first.handed = true
        first.holding = true
        queue.withLock { $0.owner = first }
        first.wake.signal()
        start(first)
    }

    /// Runs `slot`'s loop on a thread. The loop keeps the executor alive until it ends.
    private func start(_ slot: Slot) {
        guard threads.run({ self.serve(slot) }) else {
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

    /// Ends the threads once everything queued so far has run.
    package func shutdown() {
        let leaving = queue.withLock { queue -> [Slot] in
            queue.stopping = true
            // With no holder nothing is queued: the sleepers can leave now;
            // otherwise the holder sends them off once the queue is empty.
            guard queue.owner == nil else { return [] }
            defer { queue.sleepers = [] }
            return queue.sleepers
        }
        for slot in leaving { slot.wake.signal() }
    }

    /// Whether the calling thread holds this executor.
    package var isCurrent: Bool {
        let running = queue.withLock { $0.owner?.threadIdentifier ?? 0 }
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

    /// Runs `body` on the calling thread without holding the executor, then
    /// `finish` with its result holding it: meanwhile the executor's other
    /// work runs on a standby thread. For a blocking call (an `fdatasync`)
    /// made from work given to ``perform(_:)``; `body` must not touch the
    /// actor's state. `finish` runs at once on this thread when no other
    /// thread holds the executor then (a lone call needs no hand-over), else
    /// it is queued behind the work that arrived meanwhile. Work queued
    /// behind the caller's runs first, in order, on the standby thread.
    package func runOutside<Value: Sendable>(_ body: () -> Value, then finish: @escaping @Sendable (Value) -> Void) {
        let (mine, handedTo, spawned) = queue.withLock { queue -> (Slot, Slot?, Slot?) in
            guard let mine = queue.owner, mine.threadIdentifier == PlatformThread.currentIdentifier() else {
                preconditionFailure("runOutside called off the executor's thread")
            }
            // What this thread took but has not run goes back first, so the
            // standby thread runs it before anything newer.
            if mine.next < mine.taken.count {
                queue.items.insert(contentsOf: mine.taken[mine.next...], at: 0)
            }
            mine.taken.removeAll(keepingCapacity: true)
            mine.next = 0
            mine.holding = false
            // Whoever holds the executor next needs a thread asleep for it.
            var spawned: Slot?
            if queue.sleepers.isEmpty {
                let slot = Slot()
                queue.sleepers.append(slot)
                spawned = slot
            }
            return (mine, Self.release(&queue), spawned)
        }
        if let spawned { start(spawned) }
        handedTo?.wake.signal()
        let value = body()
        let inline = queue.withLock { queue -> Bool in
            guard queue.owner == nil else {
                // Another thread holds it: `finish` waits its turn there, and
                // this thread goes back to sleep (see `serve`).
                queue.items.append(.work { finish(value) })
                return false
            }
            queue.owner = mine
            mine.holding = true
            return true
        }
        if inline { finish(value) }
    }

    /// Gives up the executor (the lock held): to a sleeper when work is
    /// queued. Returns the slot to signal, if any.
    private static func release(_ queue: inout Queue) -> Slot? {
        let next = queue.items.isEmpty ? nil : queue.sleepers.popLast()
        queue.owner = next
        next?.handed = true
        next?.holding = true
        return next
    }

    private func add(_ work: Work) {
        let handedTo = queue.withLock { queue -> Slot? in
            queue.items.append(work)
            guard queue.owner == nil else { return nil }
            return Self.release(&queue)
        }
        handedTo?.wake.signal()
    }

    /// What a thread does next, decided under the lock.
    private enum Step {
        case run
        case sleep(handTo: Slot?)
        case leave([Slot])
    }

    /// A thread's loop: waits to hold the executor, takes everything queued
    /// at once (one lock per round, not per job), and gives the executor up
    /// when nothing is left.
    private func serve(_ slot: Slot) {
        let reference = asUnownedSerialExecutor()
        queue.withLock { _ in slot.threadIdentifier = PlatformThread.currentIdentifier() }
        guard waitToHold(slot) else { return }
        while true {
            let step = queue.withLock { queue -> Step in
                if !slot.holding {
                    // It stepped outside and another thread took over.
                    queue.sleepers.append(slot)
                    return .sleep(handTo: nil)
                }
                if !queue.items.isEmpty {
                    swap(&slot.taken, &queue.items)
                    slot.next = 0
                    return .run
                }
                if queue.stopping {
                    queue.owner = nil
                    slot.holding = false
                    defer { queue.sleepers = [] }
                    return .leave(queue.sleepers)
                }
                queue.sleepers.append(slot)
                slot.holding = false
                return .sleep(handTo: Self.release(&queue))
            }
            switch step {
            case .run:
                // `runOutside` may empty `taken` from within an item.
                while slot.next < slot.taken.count {
                    let item = slot.taken[slot.next]
                    slot.next += 1
                    switch item {
                    case .job(let job): job.runSynchronously(on: reference)
                    case .work(let work): work()
                    }
                }
                slot.taken.removeAll(keepingCapacity: true)
                slot.next = 0
            case .sleep(let handTo):
                handTo?.wake.signal()
                guard waitToHold(slot) else { return }
            case .leave(let others):
                for other in others { other.wake.signal() }
                return
            }
        }
    }

    /// Sleeps until the executor is handed to `slot` (`true`) or the thread must leave (`false`).
    private func waitToHold(_ slot: Slot) -> Bool {
        slot.wake.wait()
        return queue.withLock { _ in
            defer { slot.handed = false }
            return slot.handed
        }
    }
}

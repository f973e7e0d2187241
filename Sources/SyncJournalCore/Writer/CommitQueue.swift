/// Who may learn that their records are durable, and when: the group-commit
/// rule of the journal's one write path, kept apart from the file so it can
/// be tested without one.
///
/// Batches are written at the end of the file one after another; a barrier
/// (`fdatasync`) runs beside the writes, so the next batch is written while
/// the last one is being synced. The queue holds the batches that are
/// written but not yet covered by a barrier, with whoever waits for them.
///
/// Its rules, each tested in `CommitQueueTests`:
/// 1. A waiter is released only by a barrier that began after its batch was
///    written: it reports the end of the file it read before syncing, and
///    only batches ending there or before are released.
/// 2. Waiters are released in the order their batches were written, and a
///    waiter that wrote nothing (``follow(_:)``) is released with the batch
///    written before it, never ahead of an earlier writer's durability.
/// 3. At most one barrier the queue started runs at a time; one that ends
///    with batches still waiting asks for the next
///    (``barrierEnded(durableThrough:)``). An owner that must make room for
///    a write may run a barrier of its own meanwhile
///    (``released(durableThrough:)``): it releases what it covers and leaves
///    the running one alone.
/// 4. After a failed barrier nothing is released as durable again: every
///    waiter, written or following, is handed back to be refused
///    (``barrierFailed()``), the queue refuses to start another, and a batch
///    reported written afterwards is not taken (``wrote(end:waiters:)``
///    returns `false`): its bytes may have gone out while the barrier
///    failed on another thread, and no barrier will ever cover them.
package struct CommitQueue<Waiter> {
    /// A written batch: the end of its bytes in the file, and who waits for it.
    private struct Batch {
        var end: Int64
        var waiters: [Waiter]
    }

    /// Written batches not yet covered by a barrier, in file order.
    private var batches: [Batch] = []
    /// Whether a barrier the queue started is running.
    package private(set) var barrierRunning = false
    /// Set by a failed barrier: the file's durability is unknown from then on.
    package private(set) var failed = false

    /// An empty queue.
    package init() {}


    /// Whether written batches wait for a barrier.
    package var hasWritten: Bool { !batches.isEmpty }

    /// Whether nothing is written and unsynced and no barrier runs.
    package var isIdle: Bool { batches.isEmpty && !barrierRunning }

    /// A batch was written and ends at `end` in the file; `waiters` learn of
    /// its durability once a barrier that starts from now on returns.
    /// Returns `false`, keeping nothing, after a failed barrier: the caller
    /// refuses `waiters` itself.
    @discardableResult
    package mutating func wrote(end: Int64, waiters: [Waiter]) -> Bool {
        guard !failed else { return false }
        precondition(batches.last.map { $0.end <= end } ?? true, "batches are written in file order")
        batches.append(Batch(end: end, waiters: waiters))
        return true
    }

    /// Waiters whose change wrote nothing (it was refused, or changed
    /// nothing): they wait for the batch written before them. Returns `false`
    /// when no batch waits, so they may be answered at once.
    package mutating func follow(_ waiters: [Waiter]) -> Bool {
        guard let last = batches.last else { return false }
        batches.append(Batch(end: last.end, waiters: waiters))
        return true
    }

    /// Whether a barrier should start now: something is written, none runs,
    /// and none has failed. When `true` the caller runs one, reading the
    /// file's end first, and reports with ``barrierEnded(durableThrough:)``
    /// or ``barrierFailed()``.
    package mutating func barrierStarting() -> Bool {
        guard !failed, !barrierRunning, !batches.isEmpty else { return false }
        barrierRunning = true
        return true
    }

    /// A barrier returned: the file is durable through `durableThrough` (the
    /// end it read before syncing). Returns the waiters it released, in
    /// order, and whether batches written meanwhile still wait: the owner
    /// then starts the next barrier with ``barrierStarting()``.
    package mutating func barrierEnded(durableThrough: Int64) -> (released: [Waiter], stillWaiting: Bool) {
        barrierRunning = false
        let released = released(durableThrough: durableThrough)
        return (released, !batches.isEmpty)
    }

    /// A barrier the queue did not start (one an owner ran to make room for
    /// a write) returned: releases the waiters of the batches it covers, in
    /// order, and leaves the running barrier, if any, running.
    package mutating func released(durableThrough: Int64) -> [Waiter] {
        let count = batches.prefix { $0.end <= durableThrough }.count
        let released = batches.prefix(count).flatMap { $0.waiters }
        batches.removeFirst(count)
        return released
    }

    /// Every waiter still waiting, in order (the owner reads what they wrote).
    package var waiters: [Waiter] { batches.flatMap { $0.waiters } }

    /// A barrier failed: returns every waiter, to be refused. No barrier
    /// starts again.
    package mutating func barrierFailed() -> [Waiter] {
        failed = true
        barrierRunning = false
        return takeAll()
    }

    /// Takes every waiter (the owner closes or stops), in order.
    package mutating func takeAll() -> [Waiter] {
        let all = batches.flatMap { $0.waiters }
        batches = []
        return all
    }
}

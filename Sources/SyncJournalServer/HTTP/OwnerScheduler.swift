import Dispatch
import SyncJournalPlatform

/// The queue between the event loop and the worker threads, fair between
/// owners (users): at most ``HTTPServerConfiguration/maximumConcurrentRequestsPerOwner``
/// of one owner's requests run at once, owners with waiting requests take
/// turns, and each owner has a budget of body bytes in flight. One user's
/// many or large pushes therefore cannot take every worker or all memory.
///
/// ```swift
/// let scheduler = OwnerScheduler(configuration: configuration)
/// guard scheduler.reserve(owner: "alice", bytes: 4_096) == nil else { refuse() }
/// scheduler.submit(OwnerScheduler.Job(owner: "alice", bytes: 4_096, respond: { _ in answer() }, handle: handle))
/// while let job = scheduler.next() { scheduler.run(job) }   // on each worker
/// ```
final class OwnerScheduler: Sendable {
    /// One request's work and what it holds of its owner's limits.
    struct Job: Sendable {
        /// The owner (`""` for requests of no one in particular).
        var owner: String
        /// Body bytes reserved with ``OwnerScheduler/reserve(owner:bytes:)``, given back when it finishes.
        var bytes: Int
        /// Calls the responder (it may block); `nil` when the responder kept
        /// the handle to answer later (a parked request).
        var respond: @Sendable (ResponseHandle) -> HTTPResponse?
        /// Where the answer goes.
        var handle: ResponseHandle
    }

    private struct OwnerState {
        var queued: [Job] = []
        var queuedStart = 0
        var running = 0
        var bytes = 0
        var admitted = 0
        var waitingCount: Int { queued.count - queuedStart }
    }

    private struct State {
        var owners: [String: OwnerState] = [:]
        /// Owners with waiting requests, in turn order.
        var turns: [String] = []
        var closed = false
    }

    private let state = Mutex(State())
    /// Counts runnable jobs (waiting, of an owner below its concurrency), so
    /// a worker woken always finds one.
    private let runnable = DispatchSemaphore(value: 0)
    private let concurrency: Int
    private let queueLimit: Int
    private let byteBudget: Int

    /// A scheduler with the configuration's per-owner limits.
    init(configuration: HTTPServerConfiguration) {
        concurrency = max(1, configuration.maximumConcurrentRequestsPerOwner)
        queueLimit = max(1, configuration.maximumQueuedRequestsPerOwner)
        byteBudget = max(configuration.maximumBodyBytes, configuration.maximumBodyBytesInFlightPerOwner)
    }

    /// Admits one more request of `owner` with a body of `bytes`, or says
    /// why not (the reason of a 429): too many requests waiting or running,
    /// or too many body bytes in flight.
    func reserve(owner: String, bytes: Int) -> String? {
        state.withLock { state -> String? in
            var entry = state.owners[owner] ?? OwnerState()
            if entry.admitted >= queueLimit {
                return "\(entry.admitted) requests of this user are in flight, at most \(queueLimit); retry later"
            }
            if entry.bytes + bytes > byteBudget {
                return "\(entry.bytes) body bytes of this user are in flight and \(bytes) more would pass the budget of \(byteBudget); retry later"
            }
            entry.admitted += 1
            entry.bytes += bytes
            state.owners[owner] = entry
            return nil
        }
    }

    /// Gives back a reservation whose request never reached ``submit(_:)``
    /// (its connection ended first).
    func release(owner: String, bytes: Int) {
        state.withLock { state in
            guard var entry = state.owners[owner] else { return }
            entry.admitted -= 1
            entry.bytes -= bytes
            Self.store(entry, for: owner, in: &state)
        }
    }

    /// Queues a reserved request's job.
    func submit(_ job: Job) {
        let wakes = state.withLock { state -> Bool in
            var entry = state.owners[job.owner] ?? OwnerState()
            let wakes = entry.waitingCount < concurrency - entry.running
            if entry.waitingCount == 0 { state.turns.append(job.owner) }
            entry.queued.append(job)
            state.owners[job.owner] = entry
            return wakes
        }
        if wakes { runnable.signal() }
    }

    /// The next job in turn, waiting for one; `nil` once ``close(workers:)`` was called.
    func next() -> Job? {
        runnable.wait()
        return state.withLock { state -> Job? in
            for index in state.turns.indices {
                let owner = state.turns[index]
                guard var entry = state.owners[owner], entry.waitingCount > 0, entry.running < concurrency else { continue }
                let job = entry.queued[entry.queuedStart]
                entry.queuedStart += 1
                if entry.queuedStart * 2 >= entry.queued.count {
                    entry.queued.removeFirst(entry.queuedStart)
                    entry.queuedStart = 0
                }
                entry.running += 1
                state.owners[owner] = entry
                // This owner goes to the back of the turns, or leaves them when it has nothing waiting.
                state.turns.remove(at: index)
                if entry.waitingCount > 0 { state.turns.append(owner) }
                return job
            }
            return nil
        }
    }

    /// Runs `job` on the calling worker: the answer is handed to the event
    /// loop only after the job's place and bytes are given back, so a client
    /// that has read it finds its budget free for the next request.
    /// A parked request (`respond` gave `nil`) gives its place back too: it
    /// waits without a worker and without counting against the owner's
    /// requests in storage.
    func run(_ job: Job) {
        let response = job.respond(job.handle)
        finished(job)
        if let response { job.handle.send(response) }
    }

    /// Marks `job` done: its owner may run another, its bytes are given back.
    func finished(_ job: Job) {
        let wakes = state.withLock { state -> Bool in
            guard var entry = state.owners[job.owner] else { return false }
            let wakes = entry.waitingCount > concurrency - entry.running
            entry.running -= 1
            entry.admitted -= 1
            entry.bytes -= job.bytes
            Self.store(entry, for: job.owner, in: &state)
            return wakes
        }
        if wakes { runnable.signal() }
    }

    /// Wakes `workers` threads waiting in ``next()`` so they see no job and end.
    func close(workers: Int) {
        state.withLock { $0.closed = true }
        for _ in 0..<workers { runnable.signal() }
    }

    private static func store(_ entry: OwnerState, for owner: String, in state: inout State) {
        if entry.admitted == 0 && entry.running == 0 && entry.waitingCount == 0 {
            state.owners[owner] = nil
        } else {
            state.owners[owner] = entry
        }
    }
}

import SyncJournalProtocol
/// Who is waiting to hear what the store decided: callers of
/// ``LocalStore/outcome(of:timeout:clock:)`` per operation, the outcomes of operations that
/// left the queue recently (so a caller that asks just after still gets its
/// answer), and the streams of ``LocalStore/changes()``. Memory only; one
/// board per store, used on the store's actor.
struct OutcomeBoard {
    /// How an operation left the queue, as the store remembers it.
    enum Settled: Sendable {
        /// Its outcome.
        case final(OperationOutcome)
        /// Merged into another queued operation by compaction: its outcome is that one's.
        case coalesced(into: OperationID)
    }

    /// Callers waiting per operation, each with the token of its wait.
    private var waiters: [OperationID: [(token: Int, continuation: CheckedContinuation<Settled, Never>)]] = [:]
    /// Waits that stopped waiting (their time ran out, or their task was cancelled).
    private var givenUp: Set<Int> = []
    private var nextWait = 0
    /// Outcomes of operations that left the queue recently.
    private var recent: [OperationID: Settled] = [:]
    /// The order `recent` was filled in, to forget the oldest first.
    private var recentOrder: [OperationID] = []
    private var observers: [Int: AsyncStream<StoreChange>.Continuation] = [:]
    private var nextObserver = 0

    /// How many recent outcomes are kept at most, and how many are forgotten
    /// at once when there are more (forgetting in blocks keeps it cheap).
    private static let recentLimit = 4096
    private static let forgetBlock = 1024

    /// The remembered outcome of `id`, if it left the queue recently.
    func recentOutcome(of id: OperationID) -> Settled? { recent[id] }

    /// A token for one caller's wait, which may span several operations (compaction).
    mutating func makeWaitToken() -> Int {
        nextWait += 1
        return nextWait
    }

    /// Adds a caller waiting for the outcome of `id`.
    mutating func wait(for id: OperationID, token: Int, _ continuation: CheckedContinuation<Settled, Never>) {
        waiters[id, default: []].append((token, continuation))
    }

    /// Ends the wait `token` with ``OperationOutcome/pending``; if it is not
    /// waiting right now, it gives up before it waits again.
    mutating func giveUp(_ token: Int) {
        for (id, list) in waiters {
            guard let index = list.firstIndex(where: { $0.token == token }) else { continue }
            var rest = list
            let waiter = rest.remove(at: index)
            waiters[id] = rest.isEmpty ? nil : rest
            waiter.continuation.resume(returning: .final(.pending))
            return
        }
        givenUp.insert(token)
    }

    /// Whether the wait `token` gave up; forgets it when `forget` is set (the wait ended).
    mutating func hasGivenUp(_ token: Int, forget: Bool = false) -> Bool {
        forget ? givenUp.remove(token) != nil : givenUp.contains(token)
    }

    /// Resumes the waiters of `id`. An outcome that ends the operation is
    /// remembered for a while (a quarantine is not: the operation is still queued).
    mutating func settle(_ id: OperationID, _ outcome: Settled, remember: Bool = true) {
        if remember {
            if recent.updateValue(outcome, forKey: id) == nil { recentOrder.append(id) }
            if recentOrder.count > Self.recentLimit {
                for old in recentOrder.prefix(Self.forgetBlock) { recent[old] = nil }
                recentOrder.removeFirst(Self.forgetBlock)
            }
        }
        // Most operations have no caller waiting: no lookup then.
        guard !waiters.isEmpty else { return }
        for waiter in waiters.removeValue(forKey: id) ?? [] { waiter.continuation.resume(returning: outcome) }
    }

    /// Adds a stream of changes; the token removes it again.
    mutating func addObserver(_ continuation: AsyncStream<StoreChange>.Continuation) -> Int {
        let token = nextObserver
        nextObserver += 1
        observers[token] = continuation
        return token
    }

    /// Whether any stream listens (without one, changes need not be listed).
    var hasObservers: Bool { !observers.isEmpty }

    /// Removes the stream added with `token` (its reader stopped listening).
    mutating func removeObserver(_ token: Int) { observers[token] = nil }

    /// Hands `changes` to every stream, in order.
    func broadcast(_ changes: [StoreChange]) {
        for change in changes {
            for observer in observers.values { observer.yield(change) }
        }
    }

    /// Ends every wait (with ``OperationOutcome/unknown``) and every stream:
    /// the store closed or retired.
    mutating func endAll() {
        let waiting = waiters
        waiters = [:]
        for waiter in waiting.values.joined() { waiter.continuation.resume(returning: .final(.unknown)) }
        let streams = observers
        observers = [:]
        for stream in streams.values { stream.finish() }
    }
}

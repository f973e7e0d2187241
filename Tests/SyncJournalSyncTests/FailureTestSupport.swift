import Foundation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

// Helpers of the failure, scheduler and read-back tests. Time is a
// ManualClock: nothing sleeps, and `advance` returns once the syncs the
// engine's timers started have finished.

/// Sits between the engine and the fault injector and notes every push
/// attempt (failed ones too): the virtual time, the batch, and the backoff the
/// scheduler had set at that moment. Reads and pulls pass through.
actor AttemptLog: SyncTransport {
    struct Attempt: Sendable {
        /// Virtual time of the attempt.
        var at: Int64
        /// The scheduler's `backoffUntil` when the push went out.
        var backoffUntil: Int64?
        /// The operations pushed.
        var operationIDs: [OperationID]
    }

    private let base: any SyncTransport
    private let clock: ManualClock
    private weak var engine: SyncEngine?
    private(set) var pushes: [Attempt] = []

    init(_ base: any SyncTransport, clock: ManualClock) {
        self.base = base
        self.clock = clock
    }

    /// The engine whose schedule each attempt is checked against.
    func watch(_ engine: SyncEngine) { self.engine = engine }

    func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
        // The engine is suspended in this very await, so its state can be read.
        let until = await engine?.scheduleState.backoffUntil
        pushes.append(Attempt(at: clock.elapsedMilliseconds, backoffUntil: until, operationIDs: mutations.map(\.operationID)))
        return try await base.push(mutations)
    }

    func pull(_ request: PullRequest) async throws(TransportError) -> PullPage { try await base.pull(request) }

    func read(kind: String, id: String) async throws(TransportError) -> ServerRow? { try await base.read(kind: kind, id: id) }

    /// Times of the push requests, in order.
    var pushTimes: [Int64] { pushes.map(\.at) }
}

/// Refuses (HTTP 413) any push whose string fields add up to more than
/// `maximumBytes`, as a server with a request-body limit does; a single
/// mutation above the limit is refused even alone.
struct ByteLimitedTransport: SyncTransport {
    let base: any SyncTransport
    let maximumBytes: Int

    static func size(of mutation: Mutation) -> Int {
        mutation.fields.values.reduce(0) { total, value in
            if case .string(let text) = value { return total + text.utf8.count }
            return total + 8
        }
    }

    func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
        let bytes = mutations.reduce(0) { $0 + Self.size(of: $1) }
        if bytes > maximumBytes { throw .tooLarge(reason: "413: \(bytes) bytes, at most \(maximumBytes)") }
        return try await base.push(mutations)
    }

    func pull(_ request: PullRequest) async throws(TransportError) -> PullPage { try await base.pull(request) }

    func read(kind: String, id: String) async throws(TransportError) -> ServerRow? { try await base.read(kind: kind, id: id) }
}

/// One device on a virtual clock: a store, an engine whose requests go
/// through an ``AttemptLog`` and a ``FaultInjectingTransport`` to the
/// reference server (reads included), and the settings to reopen it.
struct FailureRig {
    struct Settings: Sendable {
        var user = "u1"
        var kinds = ["pin"]
        var batchSize = 100
        var retryPolicy = RetryPolicy()
        var jitterSeed: UInt64 = 42
        var maximumPermanentFailures = 3
        /// Wraps the server's transport (say, in a ``ByteLimitedTransport``).
        var wrap: @Sendable (any SyncTransport) -> any SyncTransport = { $0 }
    }

    let path: String
    let server: ReferenceServer
    let clock: ManualClock
    let settings: Settings
    let store: LocalStore
    let faulty: FaultInjectingTransport
    let log: AttemptLog
    let engine: SyncEngine

    /// Opens the device; with `start` the engine schedules its own syncs
    /// (reporting `online`), otherwise the test calls `engine.sync()`.
    static func open(_ path: String, server: ReferenceServer, clock: ManualClock = ManualClock(),
                     settings: Settings = Settings(), start: Bool = true, online: Bool = true) async throws -> FailureRig {
        let store = try await LocalStore.open(path: path, options: .init(clock: StillClock(milliseconds: farFutureMilliseconds),
                                                                         maximumPermanentFailures: settings.maximumPermanentFailures))
        let faulty = FaultInjectingTransport(settings.wrap(server.transport(user: settings.user)))
        let log = AttemptLog(faulty, clock: clock)
        let engine = SyncEngine(store: store, transport: log,
                                options: .init(kinds: settings.kinds, batchSize: settings.batchSize,
                                               retryPolicy: settings.retryPolicy, jitterSeed: settings.jitterSeed),
                                clock: clock)
        await log.watch(engine)
        if start { await engine.start(online: online) }
        return FailureRig(path: path, server: server, clock: clock, settings: settings, store: store,
                          faulty: faulty, log: log, engine: engine)
    }

    /// Stops the engine, closes the store and opens both again from the
    /// journal file (the app restarted); the server and clock stay.
    func reopen(start: Bool = true, online: Bool = true) async throws -> FailureRig {
        await engine.stop()
        try await store.close()
        return try await Self.open(path, server: server, clock: clock, settings: settings, start: start, online: online)
    }

    /// The queued operation `id`.
    func entry(_ id: OperationID) async throws -> OutboxOperation? {
        try await store.outboxOperations().first { $0.id == id }
    }

    /// The operations that can be sent now or after their own backoff: the
    /// first of each record, unless it is quarantined.
    func sendableOperations() async throws -> [OutboxOperation] {
        var seen = Set<RecordKey>()
        return try await store.outboxOperations().filter { seen.insert($0.key).inserted && !$0.quarantined }
    }

    /// The scheduler's promise, checked from outside: while the app reports
    /// the device online and something can be sent, an attempt is scheduled,
    /// its timer is set, and it is not before the backoff.
    func expectAttemptScheduled(online: Bool = true, _ comment: Comment? = nil,
                                sourceLocation: SourceLocation = #_sourceLocation) async throws {
        guard online, try await !sendableOperations().isEmpty else { return }
        let next = await engine.nextAttemptAtMilliseconds
        let schedule = await engine.scheduleState
        #expect(next != nil, "the queue stalled: \(comment ?? "") \(schedule)", sourceLocation: sourceLocation)
        guard let next else { return }
        #expect(clock.pendingTimerDeadlineMilliseconds.contains(next), "no timer set for the scheduled attempt at \(next)",
                sourceLocation: sourceLocation)
        if let until = await engine.scheduleState.backoffUntil {
            #expect(next >= until, "an attempt scheduled inside the backoff", sourceLocation: sourceLocation)
        }
    }

    /// Advances the clock to the next scheduled attempt; `false` if none is scheduled.
    @discardableResult
    func advanceToNextAttempt() async -> Bool {
        guard let next = await engine.nextAttemptAtMilliseconds else { return false }
        await clock.advance(toMilliseconds: next)
        return true
    }
}

extension OperationOutcome {
    var wasAcknowledged: Bool { if case .acknowledged = self { return true } else { return false } }
    var quarantinedOutboxEntry: OutboxEntryStatus? { if case .quarantined(let entry) = self { return entry } else { return nil } }
    var conflictRecord: ConflictRecord? { if case .conflicted(let conflict) = self { return conflict } else { return nil } }
}

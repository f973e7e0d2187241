import Foundation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// Notes every push and pull the engine makes (virtual time, and whether a
/// push was open when a pull went out), and passes everything on, waits too.
actor RequestLog: SyncTransport {
    enum Request: Sendable, Hashable {
        case push(at: Int64, operations: [OperationID])
        case pull(at: Int64, duringPush: Bool)
    }

    private let base: any SyncTransport
    private let clock: ManualClock
    private var pushesOpen = 0
    private(set) var requests: [Request] = []

    init(_ base: any SyncTransport, clock: ManualClock) {
        self.base = base
        self.clock = clock
    }

    func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
        try await push(mutations, expecting: nil)
    }

    func push(_ mutations: [Mutation], expecting expectation: ServerExpectation?) async throws(TransportError) -> [MutationResult] {
        requests.append(.push(at: clock.elapsedMilliseconds, operations: mutations.map(\.operationID)))
        pushesOpen += 1
        defer { pushesOpen -= 1 }
        return try await base.push(mutations, expecting: expectation)
    }

    func pull(_ request: PullRequest) async throws(TransportError) -> PullPage {
        requests.append(.pull(at: clock.elapsedMilliseconds, duringPush: pushesOpen > 0))
        return try await base.pull(request)
    }

    func read(kind: String, id: String) async throws(TransportError) -> ServerRow? { try await base.read(kind: kind, id: id) }

    func waitForChanges(after cursors: [String: PullCursor?], timeout: Duration) async throws(TransportError) -> ChangeWaitResult {
        try await base.waitForChanges(after: cursors, timeout: timeout)
    }

    /// Times of the pulls, in order.
    var pullTimes: [Int64] {
        requests.compactMap { if case .pull(let at, _) = $0 { return at } else { return nil } }
    }

    /// Pulls that went out while a push was open.
    var pullsDuringPush: Int {
        requests.filter { if case .pull(_, true) = $0 { return true } else { return false } }.count
    }

    /// Every operation id pushed.
    var pushedOperations: [OperationID] {
        requests.flatMap { if case .push(_, let operations) = $0 { return operations } else { return [] } }
    }
}

/// A server whose waits for changes the test ends: pushes and pulls pass
/// through, each wait is held until the test answers it or fails it (as the
/// dropped connection of a server that died does).
actor WaitHoldingTransport: SyncTransport {
    private let base: any SyncTransport
    private var held: [CheckedContinuation<Result<ChangeWaitResult, TransportError>, Never>] = []
    private var heldWatchers: [CheckedContinuation<Void, Never>] = []

    init(_ base: any SyncTransport) { self.base = base }

    func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] { try await base.push(mutations) }
    func pull(_ request: PullRequest) async throws(TransportError) -> PullPage { try await base.pull(request) }
    func read(kind: String, id: String) async throws(TransportError) -> ServerRow? { try await base.read(kind: kind, id: id) }

    func waitForChanges(after cursors: [String: PullCursor?], timeout: Duration) async throws(TransportError) -> ChangeWaitResult {
        let result = await withCheckedContinuation { continuation in
            held.append(continuation)
            let watchers = heldWatchers
            heldWatchers = []
            for watcher in watchers { watcher.resume() }
        }
        return try result.get()
    }

    /// Returns once a wait is held (at once if one already is).
    func untilWaitHeld() async {
        if !held.isEmpty { return }
        await withCheckedContinuation { heldWatchers.append($0) }
    }

    /// Ends the oldest held wait with `result`.
    func endHeldWait(_ result: Result<ChangeWaitResult, TransportError>) {
        guard !held.isEmpty else { return }
        held.removeFirst().resume(returning: result)
    }

    /// Ends every held wait as timed out, so no task stays suspended after a test.
    func releaseAll() {
        for continuation in held { continuation.resume(returning: .success(.timedOut)) }
        held = []
    }
}

/// One device for live-sync tests: a store, a fault injector in front of the
/// reference server, a request log, and an engine on a virtual clock.
struct LiveRig {
    static let coalescing: Int64 = 500
    let server: ReferenceServer
    let clock: ManualClock
    let store: LocalStore
    let faulty: FaultInjectingTransport
    let log: RequestLog
    let engine: SyncEngine

    static func open(_ path: String, server: ReferenceServer, user: String = "u1", clock: ManualClock = ManualClock(),
                     idlePullInterval: Duration? = nil, changeWaitTimeout: Duration? = nil,
                     start: Bool = true, online: Bool = true, base: (any SyncTransport)? = nil) async throws -> LiveRig {
        let store = try await LocalStore.open(path: path, options: .init(clock: StillClock(milliseconds: farFutureMilliseconds)))
        let faulty = FaultInjectingTransport(base ?? server.transport(user: user))
        let log = RequestLog(faulty, clock: clock)
        let policy = RetryPolicy(baseDelay: .milliseconds(1_000), maximumDelay: .milliseconds(16_000), editCoalescing: .milliseconds(coalescing))
        let engine = SyncEngine(store: store, transport: log,
                                options: .init(kinds: ["pin"], retryPolicy: policy, jitterSeed: 11,
                                               idlePullInterval: idlePullInterval, changeWaitTimeout: changeWaitTimeout,
                                               changeWaitMargin: .seconds(10)),
                                clock: clock)
        if start { await engine.start(online: online) }
        return LiveRig(server: server, clock: clock, store: store, faulty: faulty, log: log, engine: engine)
    }
}

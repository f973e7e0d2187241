import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore

/// Pushes a store's queued operations and pulls server changes through a
/// transport: cursor pulls and idempotent pushes, with per-id removals and
/// in-flight creates that a delete can no longer cancel locally.
///
/// - One sync at a time: a call while a sync runs waits for it and shares its
///   outcome; there is never a parallel request.
/// - Push before pull: the outbox is the user's work; it goes first.
/// - Each round sends queued operations that are not in flight (the first of
///   each record only), journals that they may reach the server, and
///   acknowledges only what was sent; edits made meanwhile wait for the next
///   round. Rounds repeat until nothing is left to send.
/// - Pull pages until `hasMore` is false, stopping with an error after
///   ``Options/maximumPages`` (a cursor that does not advance is a server bug).
/// - Every result is journaled (by the store) before the view changes, and a
///   retired store stops the sync after any await.
/// - No poison pill: an operation that fails waits out its own backoff and
///   holds back only later operations on the same record; a batch the
///   server refuses as too large is split.
/// - With ``start(online:)`` the engine schedules syncs itself: soon after
///   an edit, when the app reports the device online, and when a backoff
///   ends; never sooner than the backoff allows. It also pulls while idle
///   (``Options/idlePullInterval``), when the app comes to the foreground
///   (``appDidBecomeActive()``), and when a wait for server changes reports
///   some (``Options/changeWaitTimeout``).
/// - Refused credentials (``SyncFailure/authentication(reason:)``) charge no
///   operation and pause scheduling until ``resumeAfterAuthentication()``.
/// - ``statusUpdates()`` tells a UI what the engine does and whether the
///   server can be reached.
/// - On iOS, ``suspend()`` and ``resume()`` pause it while the app is
///   suspended, and ``sync(before:)`` answers by a background task's deadline.
///
/// ```swift
/// let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["pin"]))
/// await engine.start()                      // syncs after edits, retries with backoff
/// await engine.setOnline(false)             // from the app's reachability callback
/// switch await engine.sync() {              // or sync now, by hand
/// case .ok(let pushed, let pulled, let conflicts): …
/// case .skipped(.offline): …                // normal: the view keeps its data
/// case .retryLater(let reason, let after): …
/// case .failed(let failure): …
/// }
/// ```
public actor SyncEngine {
    /// Settings of an engine.
    public struct Options: Sendable {
        /// The kinds to pull.
        public var kinds: [String]
        /// Operations per push request.
        public var batchSize: Int
        /// Rows per pull page.
        public var pullLimit: Int
        /// Pages one sync may pull before it gives up.
        public var maximumPages: Int
        /// Pages a full re-pull of one kind may take (a resync reads every row of the kind).
        public var maximumResyncPages: Int
        /// Backoff and edit coalescing.
        public var retryPolicy: RetryPolicy
        /// Seed of the backoff jitter (`nil`: a random seed), so a simulation repeats exactly.
        public var jitterSeed: UInt64?
        /// Once started, pull this long after the last sync even when nothing
        /// is pending, so an idle app sees other devices' edits (`nil`: pull
        /// only after pushes, when the app becomes active, and when the
        /// server announces changes).
        public var idlePullInterval: Duration?
        /// Once started, keep a wait for server changes open
        /// (``SyncTransport/waitForChanges(after:timeout:)``), each lasting at
        /// most this long, and pull when it reports changes (`nil`: no waits).
        /// A transport that cannot wait is asked once.
        public var changeWaitTimeout: Duration?
        /// How long past its timeout a wait may stay unanswered before the
        /// engine gives it up as lost and opens a new one.
        public var changeWaitMargin: Duration

        /// Options for pulling `kinds`.
        public init(kinds: [String], batchSize: Int = 100, pullLimit: Int = 500, maximumPages: Int = 50,
                    maximumResyncPages: Int = 100_000, retryPolicy: RetryPolicy = RetryPolicy(), jitterSeed: UInt64? = nil,
                    idlePullInterval: Duration? = nil, changeWaitTimeout: Duration? = nil, changeWaitMargin: Duration = .seconds(10)) {
            self.kinds = kinds
            self.batchSize = max(1, batchSize)
            self.pullLimit = max(1, pullLimit)
            self.maximumPages = max(1, maximumPages)
            self.maximumResyncPages = max(1, maximumResyncPages)
            self.retryPolicy = retryPolicy
            self.jitterSeed = jitterSeed
            self.idlePullInterval = idlePullInterval
            self.changeWaitTimeout = changeWaitTimeout
            self.changeWaitMargin = changeWaitMargin
        }
    }

    /// The store this engine syncs.
    public nonisolated let store: LocalStore
    /// The same store, named for the engine-facing half it is used for here
    /// (handing operations over, keeping replies and pulled pages).
    private var outbox: LocalStore { store }
    let transport: any SyncTransport
    var options: Options
    let clock: any SyncClock
    var running: Task<SyncOutcome, Never>?
    var generator: SeededGenerator
    /// The scheduler's state (meaningful once started).
    var schedule: SyncSchedule
    var started = false
    /// The open wait for server changes, if any (see SyncEngine+ChangeWaits).
    var changeWait = ChangeWaitState()
    /// What the status reports (see SyncEngine+Status).
    var statusState = StatusState()
    var timer: SyncTimer?
    /// Where the store signals local edits while the engine is started, and
    /// the task that schedules a sync for each wake-up.
    private var editSignal: AsyncStream<Void>.Continuation?
    private var editWatcher: Task<Void, Never>?
    /// Per-operation backoff after a failure, in clock milliseconds. Memory
    /// only, like in-flight marks: after a restart everything may be tried.
    private var retryAt: [OperationID: Int64] = [:]
    /// Per operation, its own failures in a row (memory only): the exponent of
    /// its backoff. Whole-request failures (a 503 storm) are the scheduler's
    /// and do not count here, so a record's first refusal after a storm
    /// starts from the base delay.
    private var failuresInARow: [OperationID: Int] = [:]
    private var attemptCount = 0
    /// Set by ``suspend()``: nothing starts until ``resume()`` (SyncEngine+Suspension).
    var suspended = false
    /// When the running sync must stop starting requests (clock
    /// milliseconds): the earliest deadline of ``sync(before:)`` callers.
    var runDeadline: Int64?
    /// What the last reconciliation queued (for tests and the simulator).
    package internal(set) var lastReconciliation = ReuploadPlan()

    /// An engine for `store` over `transport`, timing retries with `clock`.
    public init(store: LocalStore, transport: any SyncTransport, options: Options, clock: any SyncClock = ContinuousSyncClock()) {
        self.store = store
        self.transport = transport
        self.options = options
        self.clock = clock
        generator = SeededGenerator(seed: options.jitterSeed ?? UInt64.random(in: 0...UInt64.max))
        schedule = SyncSchedule(policy: options.retryPolicy, isOnline: true, hasPendingWork: false, at: clock.now(),
                                idlePullMilliseconds: options.idlePullInterval.map(Self.milliseconds))
    }

    /// Changes the push batch size (for tests and the simulator).
    package func setBatchSize(_ size: Int) { options.batchSize = max(1, size) }

    /// Changes the pull page size.
    package func setPullLimit(_ limit: Int) { options.pullLimit = max(1, limit) }

    // MARK: Scheduling

    /// Starts scheduling syncs: one is due at once if anything is queued, and
    /// from then on after each edit (coalesced), when ``setOnline(_:)``
    /// reports connectivity back, and when a backoff ends. With
    /// ``Options/idlePullInterval`` a pull is due at once and then every
    /// interval; with ``Options/changeWaitTimeout`` a wait for server
    /// changes opens.
    public func start(online: Bool = true) async {
        guard !started else { return }
        started = true
        schedule = SyncSchedule(policy: options.retryPolicy, isOnline: online, hasPendingWork: false, at: clock.now(),
                                idlePullMilliseconds: options.idlePullInterval.map(Self.milliseconds))
        if options.idlePullInterval != nil {
            schedule.handle(.pullRequested, at: clock.now(), using: &generator)
        }
        // Edits only signal: a burst of them is one wake-up, and an edit never
        // waits for the engine to schedule or to refresh the status.
        let (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        editSignal = signal
        editWatcher = Task { [weak self] in
            for await _ in signals { await self?.localEditMade() }
        }
        await outbox.setEditObserver { signal.yield() }
        await refreshPendingWork()
        await openChangeWait()
        await refreshStatus()
    }

    /// Stops scheduling and closes the wait for changes (a sync already
    /// running finishes).
    public func stop() async {
        started = false
        timer?.cancel()
        timer = nil
        closeChangeWait()
        await outbox.setEditObserver(nil)
        editSignal?.finish()
        editSignal = nil
        editWatcher = nil
        publishStatus()
    }

    /// The app's report of connectivity (say, from a path monitor). Going
    /// online schedules an attempt at once, or when the backoff ends, and
    /// reopens the wait for changes; going offline closes it.
    public func setOnline(_ online: Bool) async {
        schedule.handle(.connectivityChanged(online: online), at: clock.now(), using: &generator)
        arm()
        if online {
            await openChangeWait()
        } else {
            closeChangeWait()
        }
        publishStatus()
    }

    /// When the scheduler will next sync (clock milliseconds), or `nil`.
    public var nextAttemptAt: Int64? { started ? schedule.nextAttemptAt : nil }

    /// The scheduler's whole state (for tests, tools and status screens).
    package var scheduleState: SyncSchedule { schedule }

    /// Syncs started so far (by the scheduler or by hand).
    package var syncsStarted: Int { attemptCount }

    /// The outbox with each operation's state, attempts, last error and the
    /// time the engine will next try it.
    public func outboxStatus() async throws(StoreError) -> [OutboxEntryStatus] {
        let next = nextAttemptAt
        return try await store.outboxStatus().map { entry in
            var entry = entry
            if entry.state == .queued || entry.state == .sent {
                let own = retryAt[entry.operation.id]
                entry.nextAttemptAt = [own, next].compactMap { $0 }.max()
            }
            return entry
        }
    }

    private func localEditMade() async {
        guard started else { return }
        schedule.handle(.localEdit, at: clock.now(), using: &generator)
        arm()
        await refreshStatus()
    }

    /// Tells the scheduler what can be sent now (after start, or a release from quarantine).
    public func refreshPendingWork() async {
        guard started, running == nil else { return }
        let readyAt = await pendingWorkReadyAt()
        schedule.handle(.pendingWorkChanged(readyAt: readyAt), at: clock.now(), using: &generator)
        arm()
    }

    /// The earliest time a queued operation may be sent, `nil` if none can be.
    private func pendingWorkReadyAt() async -> Int64? {
        let ready: [OutboxOperation]
        do throws(StoreError) {
            ready = try await outbox.operationsReadyToSend(limit: Int.max, excluding: [])
        } catch {
            // A store that cannot be read (closed, retired, its journal
            // failed) has nothing that can be sent; the sync that runs next
            // reads it again and stops with the store's reason.
            return nil
        }
        guard !ready.isEmpty else { return nil }
        let now = clock.now()
        return ready.map { max(retryAt[$0.id] ?? now, now) }.min()
    }

    /// Sets the timer for the schedule's next attempt.
    func arm() {
        timer?.cancel()
        timer = nil
        guard started, !suspended, let at = schedule.nextAttemptAt else { return }
        timer = clock.schedule(at: at) { [weak self] in await self?.timerFired() }
    }

    private func timerFired() async {
        timer = nil
        guard started else { return }
        guard schedule.isDue(at: clock.now()) else {
            arm()
            return
        }
        _ = await sync()
    }

    // MARK: Syncing

    /// Runs one sync, or waits for the one running and returns its outcome.
    /// A suspended engine (``suspend()``) returns ``SyncOutcome/skipped(_:)``
    /// at once.
    public func sync() async -> SyncOutcome {
        if suspended { return .skipped(.suspended) }
        return await runningSync().value
    }

    /// The sync running, or a new one.
    func runningSync() -> Task<SyncOutcome, Never> {
        if let running { return running }
        attemptCount += 1
        if started {
            timer?.cancel()
            timer = nil
            schedule.handle(.syncStarted, at: clock.now(), using: &generator)
        }
        let task = Task {
            let outcome = await self.runUnlessSuspended()
            // Cleared by the sync itself, so a call after it ended starts a new one.
            await self.finishRun(outcome)
            return outcome
        }
        running = task
        return task
    }

    func finishRun(_ outcome: SyncOutcome) async {
        running = nil
        runDeadline = nil
        recordForStatus(outcome)
        guard started else {
            await refreshStatus()
            return
        }
        let result: SyncSchedule.Result
        switch outcome {
        // The server answered what was asked before the deadline.
        case .ok, .deadlineReached: result = .succeeded
        case .skipped: result = .offline
        case .retryLater(_, let after): result = .transientFailure(retryAfterMilliseconds: after)
        // A changed server, like refused credentials, pauses scheduling until
        // the app acts (a reconciliation): retrying cannot help.
        case .failed(.authentication), .failed(.serverMismatch): result = .authenticationNeeded
        case .failed: result = .failed
        }
        let readyAt = await pendingWorkReadyAt()
        guard running == nil else { return }
        schedule.handle(.syncEnded(result, pendingWorkReadyAt: readyAt), at: clock.now(), using: &generator)
        arm()
        switch outcome {
        case .failed(.authentication), .failed(.store(.retired)), .failed(.serverMismatch):
            closeChangeWait()
        default:
            await openChangeWait()
        }
        await refreshStatus()
    }

    /// How one push request ended.
    private enum PushStep {
        /// Replies kept; continue with the next round.
        case done
        /// The sync must stop with this outcome.
        case stop(SyncOutcome)
    }

    func run() async -> SyncOutcome {
        statusState.serverUnreachableThisSync = false
        // A journaled mismatch stops every sync before it sends anything,
        // across restarts, until a reconciliation clears it.
        let known: KnownServer
        do { known = try await outbox.knownServer() } catch { return .failed(.store(error)) }
        if let mismatch = known.mismatch { return .failed(.serverMismatch(mismatch)) }
        // Merges found by earlier syncs whose merged fields have gone: nothing to show any more.
        do { try await outbox.dismissSettledMerges() } catch { return .failed(.store(error)) }
        var pushed = 0
        var conflicts = 0
        // Operations tried in this sync and not finished (failed or refused):
        // not resent in this sync, and the rest of their record waits behind them.
        var attempted = Set<OperationID>()
        let startedAt = clock.now()
        retryAt = retryAt.filter { $0.value > startedAt }
        let waiting = Set(retryAt.keys)
        // Two store calls per round: one picks the batch, journals it as
        // possibly sent and marks it in flight; one keeps its outcomes and
        // ends the hand-over. Only what the store handed over goes out: an
        // operation the user cancelled meanwhile is never picked.
        while true {
            if let stop = stopBeforeNextRequest() { return stop }
            let batch: SendingBatch
            do { batch = try await outbox.beginSending(limit: options.batchSize, excluding: attempted.union(waiting)) } catch {
                return .failed(.store(error))
            }
            if batch.isEmpty { break }
            setActivity(.pushing)
            switch await push(batch.operations, newlyMarked: batch.newlyMarked, pushed: &pushed, conflicts: &conflicts, attempted: &attempted) {
            case .done: continue
            case .stop(let outcome): return outcome
            }
        }
        setActivity(.pulling)
        return await pull(pushed: pushed, conflicts: conflicts)
    }

    /// Pushes `batch` (already marked sent and in flight) and keeps the
    /// replies. A batch the server finds too large is split in halves, each
    /// pushed in turn; a single operation too large fails permanently.
    private func push(_ batch: [OutboxOperation], newlyMarked: [OperationID], pushed: inout Int, conflicts: inout Int,
                      attempted: inout Set<OperationID>) async -> PushStep {
        let ids = batch.map(\.id)
        let mutations = batch.map { Mutation($0.operation) }
        let expectation: ServerExpectation?
        do throws(StoreError) {
            expectation = try await outbox.knownServer().expectation
        } catch {
            // Nothing was sent: the marks are the store's to keep or lose,
            // and the sync stops with the store's reason.
            await outbox.finishSending(ids)
            return .stop(.failed(.store(error)))
        }
        let results: [MutationResult]
        do {
            // Without an identity there is nothing to expect: the plain push,
            // which every transport implements itself.
            if let expectation {
                results = try await transport.push(mutations, expecting: expectation)
            } else {
                results = try await transport.push(mutations)
            }
        } catch {
            switch error {
            case .offline:
                // Nothing left the device: undo this attempt's sent marks, so
                // a skipped sync leaves the state as it was (and a create
                // deleted later can still vanish without reaching the server).
                do { try await outbox.withdrawSending(ids, newlyMarked: Set(newlyMarked)) } catch { return .stop(.failed(.store(error))) }
                return .stop(.skipped(.offline))
            case .transient(let reason, let after):
                // The server's trouble, not the operations': attempts are
                // counted, the permanent budget is not, and the whole sync backs off.
                // A store that cannot keep the attempt is the graver trouble: the sync stops with it.
                do { _ = try await outbox.endSending(ids, outcomes: ids.map { ($0, .failure(.transient, reason: reason)) }) }
                catch { return .stop(.failed(.store(error))) }
                return .stop(.retryLater(reason: reason, retryAfterMilliseconds: after))
            case .serverUnreachable(let reason):
                // As a transient failure: a timed-out request may have been applied.
                statusState.serverUnreachableThisSync = true
                do { _ = try await outbox.endSending(ids, outcomes: ids.map { ($0, .failure(.transient, reason: reason)) }) }
                catch { return .stop(.failed(.store(error))) }
                return .stop(.retryLater(reason: error.description, retryAfterMilliseconds: nil))
            case .unauthorized(let reason):
                // The credentials, not the operations: none is charged, and
                // they go again once the app has signed in.
                await outbox.finishSending(ids)
                return .stop(.failed(.authentication(reason: reason)))
            case .tooLarge(let reason):
                await outbox.finishSending(ids)
                if batch.count == 1 {
                    return await fail(batch[0], kind: .permanent, reason: "too large for the server: \(reason)", attempted: &attempted)
                }
                let half = batch.count / 2
                for part in [Array(batch[..<half]), Array(batch[half...])] {
                    let partIDs = part.map(\.id)
                    // Still queued and not cancelled: hand it over again.
                    let again: [OutboxOperation]
                    do { again = try await outbox.beginSending(partIDs) } catch { return .stop(.failed(.store(error))) }
                    if again.isEmpty { continue }
                    let step = await push(again, newlyMarked: newlyMarked, pushed: &pushed, conflicts: &conflicts, attempted: &attempted)
                    if case .stop = step { return step }
                }
                return .done
            case .serverMismatch(let mismatch):
                // Nothing was applied: no operation is charged, and none leaves the queue.
                await outbox.finishSending(ids)
                return .stop(await stopForMismatch(mismatch))
            case .permanent, .cursorExpired:
                // The request as a whole is refused (say, a revoked token): no
                // single operation is to blame, so none is charged for it.
                await outbox.finishSending(ids)
                return .stop(.failed(.transport(error)))
            }
        }
        // A reply is checked whole before any of it is kept. Servers answer in
        // request order, so the reply is matched by position; only a reply in
        // another order is matched by id.
        let inOrder = results.count == batch.count && zip(results, ids).allSatisfy { $0.operationID == $1 }
        var byID: [OperationID: OutboxOperation] = [:]
        if !inOrder {
            guard results.count == ids.count, Set(results.map(\.operationID)) == Set(ids) else {
                await outbox.finishSending(ids)
                if case .retired = await outbox.status { return .stop(.failed(.store(.retired))) }
                return .stop(.failed(.malformedReply(.pushResultsMismatch(results: results.count, mutations: ids.count))))
            }
            byID = Dictionary(uniqueKeysWithValues: batch.map { ($0.id, $0) })
        }
        var outcomes: [(OperationID, LocalStore.DeliveryOutcome)] = []
        outcomes.reserveCapacity(results.count)
        var entries: [OutboxOperation] = []
        entries.reserveCapacity(results.count)
        for (index, result) in results.enumerated() {
            let entry = inOrder ? batch[index] : byID[result.operationID]!
            entries.append(entry)
            switch result.outcome {
            case .applied(let row): outcomes.append((entry.id, .acknowledged(row)))
            case .conflict(let server): outcomes.append((entry.id, .conflicted(server: server)))
            case .rejected(let reason, let permanent): outcomes.append((entry.id, .failure(permanent ? .permanent : .transient, reason: reason)))
            case .duplicate, .noMatch: outcomes.append((entry.id, await readBack(entry, outcome: result.outcome)))
            }
        }
        let kept: SendingEnd
        do { kept = try await outbox.endSending(ids, outcomes: outcomes) } catch {
            if case .retired = error { return .stop(.failed(.store(.retired))) }
            return .stop(.failed(.malformedReply(.pushRows(error))))
        }
        conflicts += kept.conflicts
        let now = clock.now()
        var failed: [OutboxOperation] = []
        // Most replies are all acknowledgements of operations that never failed:
        // no per-operation bookkeeping then.
        let forgetFailures = !failuresInARow.isEmpty
        for (index, (id, outcome)) in outcomes.enumerated() {
            switch outcome {
            case .acknowledged:
                pushed += 1
                if forgetFailures { failuresInARow[id] = nil }
            case .conflicted:
                attempted.insert(id)
                if forgetFailures { failuresInARow[id] = nil }
            case .failure:
                attempted.insert(id)
                failed.append(entries[index])
            }
        }
        backOff(failed, quarantined: kept.quarantined, at: now)
        return .done
    }

    /// Records a failure of one operation the engine found itself (not in a reply).
    private func fail(_ entry: OutboxOperation, kind: FailureKind, reason: String, attempted: inout Set<OperationID>) async -> PushStep {
        attempted.insert(entry.id)
        let kept: SendingEnd
        do { kept = try await outbox.endSending([], outcomes: [(entry.id, .failure(kind, reason: reason))]) }
        catch { return .stop(.failed(.store(error))) }
        backOff([entry], quarantined: kept.quarantined, at: clock.now())
        return .done
    }

    /// Operations that failed wait out their own backoff before they are
    /// tried again; a quarantined one waits for the app instead, so when the
    /// app releases it, it goes with the next attempt.
    private func backOff(_ entries: [OutboxOperation], quarantined: Set<OperationID>, at now: Int64) {
        for entry in entries {
            if quarantined.contains(entry.id) {
                retryAt[entry.id] = nil
                failuresInARow[entry.id] = nil
                continue
            }
            let failures = (failuresInARow[entry.id] ?? 0) + 1
            failuresInARow[entry.id] = failures
            let delay = options.retryPolicy.backoffDelay(afterFailures: failures, using: &generator)
            retryAt[entry.id] = now + max(delay, 1)
        }
    }

    /// Explains a reply from a server without exactly-once delivery by reading
    /// the row back. A duplicate create is confirmed only by a
    /// readable row (with other fields, it is a conflict); an unreadable
    /// collision stays retryable. An update or delete that matched nothing is
    /// a conflict when a newer row is readable, and "deleted or no access"
    /// when none is (a delete then has what it wanted).
    private func readBack(_ entry: OutboxOperation, outcome: MutationOutcome) async -> LocalStore.DeliveryOutcome {
        let operation = entry.operation
        let row: ServerRow?
        do { row = try await transport.read(kind: operation.entity, id: operation.recordID) } catch {
            // A read that failed for now is retried; a transport that cannot read
            // rows at all (or a refused read) counts toward quarantine, never loops for ever.
            if case .permanent = error { return .failure(.permanent, reason: "could not read the row back: \(error)") }
            return .failure(.transient, reason: "could not read the row back: \(error)")
        }
        let live = row.flatMap { $0.isTombstone ? nil : $0 }
        if operation.kind == .create {
            guard let live else { return .failure(.transient, reason: "id collision with a row this user cannot read") }
            return live.fields == operation.fields ? .acknowledged(live) : .conflicted(server: live)
        }
        guard let live else {
            if operation.kind == .delete {
                // Gone (or hidden) either way: the delete has what it wanted.
                let stamp = operation.baseUpdatedAt ?? 0
                return .acknowledged(ServerRow(kind: operation.entity, id: operation.recordID, updatedAt: stamp, deletedAt: stamp,
                                               modelVersion: operation.modelVersion))
            }
            return .failure(.deletedOrNoAccess, reason: "deleted or no access: no readable row \(operation.key)")
        }
        if live.updatedAt != operation.baseUpdatedAt { return .conflicted(server: live) }
        return .failure(.transient, reason: "the server matched no row although \(operation.key) is unchanged")
    }

    // MARK: Pulling

    private func pull(pushed: Int, conflicts: Int) async -> SyncOutcome {
        var pulled = 0
        let allCursors: [String: PullCursor?]
        do { allCursors = try await outbox.cursors(for: options.kinds) } catch { return .failed(.store(error)) }
        guard !options.kinds.isEmpty else { return .ok(pushed: pushed, pulled: 0, conflicts: conflicts) }
        var pages = 0
        var resynced = Set<String>()
        // One pull names at most so many kinds: more are pulled in groups,
        // each to its last page, one group after another.
        let kinds = allCursors.keys.sorted()
        for start in stride(from: 0, to: kinds.count, by: ProtocolLimits.maximumKindsPerPull) {
            let group = kinds[start..<min(kinds.count, start + ProtocolLimits.maximumKindsPerPull)]
            var cursors = Dictionary(uniqueKeysWithValues: group.map { ($0, allCursors[$0] ?? nil) })
            while true {
                if let stop = stopBeforeNextRequest() { return stop }
                if pages == options.maximumPages {
                    return .failed(.pullNotFinished(.pageLimit(pages: pages)))
                }
                let expectation: ServerExpectation?
                do { expectation = try await outbox.knownServer().expectation } catch { return .failed(.store(error)) }
                let page: PullPage
                do {
                    page = try await transport.pull(PullRequest(cursors: cursors, limit: options.pullLimit, expectation: expectation))
                } catch {
                    switch error {
                    case .serverMismatch(let mismatch): return await stopForMismatch(mismatch)
                    case .offline: return .skipped(.offline)
                    case .transient(let reason, let after): return .retryLater(reason: reason, retryAfterMilliseconds: after)
                    case .serverUnreachable:
                        statusState.serverUnreachableThisSync = true
                        return .retryLater(reason: error.description, retryAfterMilliseconds: nil)
                    case .unauthorized(let reason): return .failed(.authentication(reason: reason))
                    case .cursorExpired(let kinds):
                        // Each kind is resynced at most once per sync: a server that
                        // keeps refusing a fresh cursor is a server bug, not a loop.
                        let expired = kinds.filter { cursors.keys.contains($0) && !resynced.contains($0) }
                        if expired.isEmpty { return .failed(.pullNotFinished(.cursorExpiredAgain(kinds: kinds))) }
                        for kind in expired.sorted() {
                            switch await resync(kind) {
                            case .success(let result):
                                cursors[kind] = .some(result.cursor)
                                pulled += result.rows
                            case .failure(let stop):
                                return stop.outcome
                            }
                            resynced.insert(kind)
                        }
                        continue
                    default: return .failed(.transport(error))
                    }
                }
                if case .retired = await outbox.status { return .failed(.store(.retired)) }
                let grouped: [LocalStore.PulledKindPage]
                do { grouped = try Self.validate(page, cursors: cursors, limit: options.pullLimit) } catch {
                    return .failed(.malformedReply(.pullPage(reason: error.reason)))
                }
                if let stop = await checkServer(of: page) { return stop }
                do { try await outbox.applyPulledPages(grouped) } catch { return .failed(.store(error)) }
                for kindPage in grouped { if let cursor = kindPage.cursor { cursors[kindPage.kind] = .some(cursor) } }
                pulled += page.rows.count
                pages += 1
                if !page.hasMore { break }
            }
        }
        return .ok(pushed: pushed, pulled: pulled, conflicts: conflicts)
    }

    /// Why a resync stopped.
    private struct ResyncStop: Error {
        var outcome: SyncOutcome
    }

    /// Re-pulls every row of `kind` from the start and replaces the kind's
    /// snapshot with them, in one journal write; queued edits stay on top.
    private func resync(_ kind: String) async -> Result<(cursor: PullCursor?, rows: Int), ResyncStop> {
        var cursor: PullCursor?
        var rows: [String: ServerRow] = [:]
        var pages = 0
        while true {
            if let stop = stopBeforeNextRequest() { return .failure(ResyncStop(outcome: stop)) }
            if pages == options.maximumResyncPages {
                return .failure(ResyncStop(outcome: .failed(.pullNotFinished(.resyncPageLimit(kind: kind, pages: pages)))))
            }
            let page: PullPage
            let expectation: ServerExpectation?
            do { expectation = try await outbox.knownServer().expectation } catch {
                return .failure(ResyncStop(outcome: .failed(.store(error))))
            }
            do {
                page = try await transport.pull(PullRequest(cursors: [kind: cursor], limit: options.pullLimit, isResync: true,
                                                            expectation: expectation))
            } catch {
                switch error {
                case .serverMismatch(let mismatch): return .failure(ResyncStop(outcome: await stopForMismatch(mismatch)))
                case .offline: return .failure(ResyncStop(outcome: .skipped(.offline)))
                case .transient(let reason, let after): return .failure(ResyncStop(outcome: .retryLater(reason: reason, retryAfterMilliseconds: after)))
                case .serverUnreachable: return .failure(ResyncStop(outcome: .retryLater(reason: error.description, retryAfterMilliseconds: nil)))
                case .unauthorized(let reason): return .failure(ResyncStop(outcome: .failed(.authentication(reason: reason))))
                default: return .failure(ResyncStop(outcome: .failed(.pullNotFinished(.resyncRefused(kind: kind, error)))))
                }
            }
            let grouped: [LocalStore.PulledKindPage]
            do { grouped = try Self.validate(page, cursors: [kind: cursor], limit: options.pullLimit) } catch {
                return .failure(ResyncStop(outcome: .failed(.malformedReply(.pullPage(reason: error.reason)))))
            }
            if let stop = await checkServer(of: page) { return .failure(ResyncStop(outcome: stop)) }
            for kindPage in grouped {
                // A row changed during the re-pull appears again later: the later copy wins.
                for row in kindPage.rows { rows[row.id] = row }
                if let next = kindPage.cursor { cursor = next }
            }
            pages += 1
            if !page.hasMore { break }
        }
        let sorted = rows.values.sorted { PullCursor(updatedAt: $0.updatedAt, id: $0.id) < PullCursor(updatedAt: $1.updatedAt, id: $1.id) }
        do { try await outbox.replaceSnapshot(kind: kind, rows: sorted, cursor: cursor) } catch {
            return .failure(ResyncStop(outcome: .failed(.store(error))))
        }
        return .success((cursor, sorted.count))
    }

    /// A pull reply that does not make sense, refused before anything is kept.
    struct MalformedPage: Error, Sendable, Hashable {
        /// What is wrong.
        var reason: String
    }

    /// Splits a page by kind and checks it: only requested kinds, no more rows
    /// than asked, rows the store can keep (``LocalStore/problem(with:)``), in
    /// `(updatedAt, id)` order after the kind's cursor, no id twice, and each
    /// kind's next cursor equal to its last row.
    static func validate(_ page: PullPage, cursors: [String: PullCursor?], limit: Int) throws(MalformedPage) -> [LocalStore.PulledKindPage] {
        if page.rows.count > limit { throw MalformedPage(reason: "\(page.rows.count) rows for a limit of \(limit)") }
        var byKind: [String: [ServerRow]] = [:]
        var order: [String] = []
        for row in page.rows {
            guard cursors.keys.contains(row.kind) else { throw MalformedPage(reason: "row of kind \"\(row.kind)\" that was not asked for") }
            // Checked here, not only by the store: a resync keeps its pages in memory until the last one.
            if let problem = LocalStore.problem(with: row) { throw MalformedPage(reason: "\(row.kind) row \"\(row.id)\": \(problem)") }
            if byKind[row.kind] == nil { order.append(row.kind) }
            byKind[row.kind, default: []].append(row)
        }
        var result: [LocalStore.PulledKindPage] = []
        for kind in page.nextCursors.keys.sorted() where byKind[kind] == nil {
            guard cursors.keys.contains(kind) else { throw MalformedPage(reason: "cursor for kind \"\(kind)\" that was not asked for") }
            // A last page may move a cursor past what the server no longer has (purged tombstones); never back.
            let next = page.nextCursors[kind]!
            let current: PullCursor? = cursors[kind] ?? nil
            if let current, next < current { throw MalformedPage(reason: "\(kind) cursor \(next) moves back from \(current)") }
            if !page.hasMore, current.map({ $0 < next }) ?? true {
                result.append(LocalStore.PulledKindPage(kind: kind, rows: [], cursor: next))
            }
        }
        for kind in order {
            let rows = byKind[kind]!
            var previous: PullCursor? = cursors[kind] ?? nil
            var ids = Set<String>()
            for row in rows {
                let position = PullCursor(updatedAt: row.updatedAt, id: row.id)
                if let previous, !(previous < position) {
                    throw MalformedPage(reason: "\(kind) rows out of order or not after the cursor at \(position)")
                }
                // A page is one read of the server: a row appears in it once
                // (a row changed during a resync appears again on a later page).
                if !ids.insert(row.id).inserted { throw MalformedPage(reason: "\(kind) row \"\(row.id)\" twice in one page") }
                previous = position
            }
            // The cursor is the last row's position; only a last page may go beyond it (see PullPage.nextCursors).
            guard let next = page.nextCursors[kind], let last = previous, next == last || (!page.hasMore && last < next) else {
                throw MalformedPage(reason: "\(kind) next cursor does not match its last row")
            }
            result.append(LocalStore.PulledKindPage(kind: kind, rows: rows, cursor: next))
        }
        return result
    }
}

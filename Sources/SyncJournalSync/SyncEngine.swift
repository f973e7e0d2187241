import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalPlatform

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
///   suspended, and ``sync(within:)`` answers by a background task's deadline.
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
        /// Whether pulls (and change waits) also cover the shared spaces the
        /// user is a member of: every space's rows of ``kinds``, the spaces'
        /// descriptions, and word that a membership ended. Off, only the
        /// personal space is pulled, as from a server without spaces.
        public var followsSharedSpaces: Bool
        /// The bytes of an attachment sent or fetched per request (1 byte to
        /// 4 MiB): what a cut transfer may have to send again, and about
        /// what a transfer holds in memory.
        public var attachmentChunkBytes: Int {
            didSet { attachmentChunkBytes = min(max(attachmentChunkBytes, 1), ProtocolLimits.maximumAttachmentChunkBytes) }
        }
        /// The kinds whose attachments are downloaded after every sync that
        /// ends well (a photo album shown offline); other kinds' files are
        /// downloaded only when asked (``SyncEngine/download(_:)``). A file
        /// that cannot be downloaded now is tried again after the next sync.
        public var prefetchedKinds: Set<String> = []

        /// Options for pulling `kinds`.
        public init(kinds: [String], batchSize: Int = 100, pullLimit: Int = 500, maximumPages: Int = 50,
                    maximumResyncPages: Int = 100_000, retryPolicy: RetryPolicy = RetryPolicy(), jitterSeed: UInt64? = nil,
                    idlePullInterval: Duration? = nil, changeWaitTimeout: Duration? = nil, changeWaitMargin: Duration = .seconds(10),
                    followsSharedSpaces: Bool = false, attachmentChunkBytes: Int = 1 << 20) {
            self.attachmentChunkBytes = min(max(attachmentChunkBytes, 1), ProtocolLimits.maximumAttachmentChunkBytes)
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
            self.followsSharedSpaces = followsSharedSpaces
        }
    }

    /// The store this engine syncs.
    public nonisolated let store: LocalStore
    /// The same store, named for the engine-facing half it is used for here
    /// (handing operations over, keeping replies and pulled pages).
    var outbox: LocalStore { store }
    let transport: any SyncTransport
    var options: Options
    /// The injected clock, read as milliseconds since a fixed origin.
    let clock: EngineClock
    var running: Task<SyncOutcome, Never>?
    /// The scheduler's state, behind a lock so that a local edit schedules
    /// its attempt without waiting for the actor.
    let scheduler: Mutex<SchedulerState>
    /// The open wait for server changes, if any (see SyncEngine+ChangeWaits).
    var changeWait = ChangeWaitState()
    /// What the status reports (see SyncEngine+Status).
    var statusState = StatusState()
    /// Per-operation backoff after a failure, in clock milliseconds. Memory
    /// only, like in-flight marks: after a restart everything may be tried.
    var retryAt: [OperationID: Int64] = [:]
    /// Per operation, its own failures in a row (memory only): the exponent of
    /// its backoff. Whole-request failures (a 503 storm) are the scheduler's
    /// and do not count here, so a record's first refusal after a storm
    /// starts from the base delay.
    var failuresInARow: [OperationID: Int] = [:]
    var attemptCount = 0
    /// When the running sync must stop starting requests (clock
    /// milliseconds): the earliest deadline of ``sync(within:)`` callers.
    var runDeadline: Int64?
    /// Contents a push found missing on the server although this device
    /// had them confirmed: uploaded again before the edits that refer to them.
    var contentsToReupload: Set<ContentHash> = []
    /// Downloads running, by content: a second caller waits for the first.
    var downloads: [ContentHash: Task<Result<String, AttachmentDownloadError>, Never>] = [:]
    /// What the last reconciliation queued (for tests and the simulator).
    package internal(set) var lastReconciliation = ReuploadPlan()

    /// An engine for `store` over `transport`, timing retries with `clock`
    /// (give the store the same one).
    public init(store: LocalStore, transport: any SyncTransport, options: Options, clock: any SyncClock = ContinuousClock()) {
        self.store = store
        self.transport = transport
        self.options = options
        self.clock = EngineClock(clock)
        let schedule = SyncSchedule(policy: options.retryPolicy, isOnline: true, hasPendingWork: false, at: self.clock.now(),
                                    idlePullMilliseconds: options.idlePullInterval.map { EngineClock.milliseconds($0, roundingUp: true) })
        scheduler = Mutex(SchedulerState(schedule: schedule,
                                         generator: SeededGenerator(seed: options.jitterSeed ?? UInt64.random(in: 0...UInt64.max))))
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
        let schedule = SyncSchedule(policy: options.retryPolicy, isOnline: online, hasPendingWork: false, at: clock.now(),
                                    idlePullMilliseconds: options.idlePullInterval.map { EngineClock.milliseconds($0, roundingUp: true) })
        scheduler.withLock { state in
            state.schedule = schedule
            state.started = true
        }
        if options.idlePullInterval != nil {
            handle(.pullRequested)
        }
        await outbox.setEditObserver { [weak self] in self?.localEditMade() }
        await refreshPendingWork()
        await openChangeWait()
        await refreshStatus()
    }

    /// Stops scheduling and closes the wait for changes (a sync already
    /// running finishes).
    public func stop() async {
        scheduler.withLock { state in
            state.started = false
            state.cancelTimer()
        }
        closeChangeWait()
        await outbox.setEditObserver(nil)
        publishStatus()
    }

    /// The app's report of connectivity (say, from a path monitor). Going
    /// online schedules an attempt at once, or when the backoff ends, and
    /// reopens the wait for changes; going offline closes it.
    public func setOnline(_ online: Bool) async {
        handle(.connectivityChanged(online: online))
        arm()
        if online {
            await openChangeWait()
        } else {
            closeChangeWait()
        }
        publishStatus()
    }

    /// How long until the scheduler syncs next (`.zero`: it is due), or
    /// `nil` when none is scheduled (not started, nothing to do, offline,
    /// syncing, or paused until the app signs in again).
    ///
    /// A wait rather than a date: the engine times its attempts on its
    /// monotonic clock, whose readings mean nothing outside it, and a wait
    /// stays right when the user changes the device's date. It is measured
    /// when read; to show a time, add it to the date then
    /// (`Date.now + .seconds(…)`) or display it as a countdown.
    ///
    /// ```swift
    /// if let wait = await engine.nextAttemptIn { print("retrying in \(wait)") }
    /// ```
    public var nextAttemptIn: Duration? {
        nextAttemptAtMilliseconds.map { .milliseconds(max(0, $0 - clock.now())) }
    }

    /// When the scheduler will next sync, in clock milliseconds since the
    /// clock's start, or `nil` (for tests and the simulator).
    package var nextAttemptAtMilliseconds: Int64? { started ? schedule.nextAttemptAt : nil }

    /// The scheduler's whole state (for tests, tools and status screens).
    package var scheduleState: SyncSchedule { schedule }

    /// Syncs started so far (by the scheduler or by hand).
    package var syncsStarted: Int { attemptCount }

    /// The outbox with each operation's state, attempts, last error and the
    /// time the engine will next try it.
    public func outboxStatus() async throws(StoreError) -> [OutboxEntryStatus] {
        let next = nextAttemptAtMilliseconds
        let now = clock.now()
        return try await store.outboxStatus().map { entry in
            var entry = entry
            if entry.state == .queued || entry.state == .sent {
                let own = retryAt[entry.operation.id]
                entry.nextAttemptIn = [own, next].compactMap { $0 }.max().map { .milliseconds(max(0, $0 - now)) }
            }
            return entry
        }
    }

    /// A local edit is durable (called on the store's thread). The edit
    /// waits only for this: the schedule's step and the timer, under the
    /// scheduler's lock, never for the actor, and the same cost however long
    /// the outbox is. The status is refreshed afterwards, off the edit's
    /// path, once for a burst of edits.
    private nonisolated func localEditMade() {
        let now = clock.now()
        let refresh = scheduler.withLock { state -> Bool in
            guard state.editMade(at: now) else { return false }
            state.arm(on: clock) { [weak self] in await self?.timerFired() }
            guard !state.statusRefreshRequested else { return false }
            state.statusRefreshRequested = true
            return true
        }
        if refresh { Task { [weak self] in await self?.refreshStatusForEdits() } }
    }

    private func refreshStatusForEdits() async {
        scheduler.withLock { $0.statusRefreshRequested = false }
        await refreshStatus()
    }

    /// Tells the scheduler what can be sent now (after start, or a release from quarantine).
    public func refreshPendingWork() async {
        guard started, running == nil else { return }
        let editsBefore = scheduler.withLock { $0.editsSignalled }
        let readyAt = await pendingWorkReadyAt()
        settle(.pendingWorkChanged(readyAt: readyAt), editsBefore: editsBefore)
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
        scheduler.withLock { $0.arm(on: clock) { [weak self] in await self?.timerFired() } }
    }

    /// Tells the schedule about `event` now.
    func handle(_ event: SyncSchedule.Event) {
        let now = clock.now()
        scheduler.withLock { $0.handle(event, at: now) }
    }

    /// Tells the schedule `event`, which carries what the outbox held when
    /// read, then of any edit signalled since `editsBefore` was counted
    /// (``SchedulerState/settle(_:editsBefore:at:)``).
    func settle(_ event: SyncSchedule.Event, editsBefore: Int) {
        let now = clock.now()
        scheduler.withLock { $0.settle(event, editsBefore: editsBefore, at: now) }
    }

    /// The scheduler's state now (a copy).
    var schedule: SyncSchedule { scheduler.withLock { $0.schedule } }

    /// Whether ``start(online:)`` has run (and not ``stop()``).
    var started: Bool { scheduler.withLock { $0.started } }

    /// Set by ``suspend()``: nothing starts until ``resume()`` (SyncEngine+Suspension).
    var suspended: Bool { scheduler.withLock { $0.suspended } }

    /// A backoff delay after `failures` failures in a row, jittered by the scheduler's generator.
    func backoffDelay(afterFailures failures: Int) -> Int64 {
        scheduler.withLock { options.retryPolicy.backoffDelay(afterFailures: failures, using: &$0.generator) }
    }

    private func timerFired() async {
        scheduler.withLock { $0.timer = nil }
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
            let now = clock.now()
            scheduler.withLock { state in
                state.cancelTimer()
                state.handle(.syncStarted, at: now)
            }
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
        case .retryLater(_, let after): result = .transientFailure(retryAfterMilliseconds: after.map { EngineClock.milliseconds($0, roundingUp: true) })
        // A changed server, like refused credentials, pauses scheduling until
        // the app acts (a reconciliation): retrying cannot help.
        case .failed(.authentication), .failed(.serverMismatch): result = .authenticationNeeded
        case .failed: result = .failed
        }
        let editsBefore = scheduler.withLock { $0.editsSignalled }
        let readyAt = await pendingWorkReadyAt()
        guard running == nil else { return }
        settle(.syncEnded(result, pendingWorkReadyAt: readyAt), editsBefore: editsBefore)
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
    enum PushStep {
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
        let outcome = await pull(pushed: pushed, conflicts: conflicts)
        if case .ok = outcome, !options.prefetchedKinds.isEmpty { await prefetchAttachments() }
        return outcome
    }
}

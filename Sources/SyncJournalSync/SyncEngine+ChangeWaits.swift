import SyncJournalProtocol
import SyncJournalStore

extension SyncEngine {
    /// The app came to the foreground: pull at once (after the running sync,
    /// or when a backoff ends), and make sure a wait for changes is open.
    /// Returns the outcome of the sync it ran, or `nil` when none could run
    /// now (offline, backing off, paused for sign-in, suspended, or a sync was
    /// running: another one follows it).
    ///
    /// ```swift
    /// // from the scene's "became active" callback:
    /// Task { await engine.appDidBecomeActive() }
    /// ```
    @discardableResult
    public func appDidBecomeActive() async -> SyncOutcome? {
        guard started, !suspended else { return nil }
        handle(.pullRequested)
        await openChangeWait()
        guard schedule.isDue(at: clock.now()) else {
            arm()
            return nil
        }
        return await sync()
    }

    /// The app has signed in again after the server refused its credentials
    /// (``SyncFailure/authentication(reason:)``): scheduling resumes and a
    /// sync runs at once. Returns that sync's outcome (`nil` when none could
    /// run now). A ``sync()`` called by hand resumes too.
    ///
    /// ```swift
    /// await tokenStore.save(try await signIn())
    /// await engine.resumeAfterAuthentication()
    /// ```
    @discardableResult
    public func resumeAfterAuthentication() async -> SyncOutcome? {
        handle(.authenticationRenewed)
        guard started else { return await sync() }
        guard schedule.isDue(at: clock.now()) else {
            arm()
            await openChangeWait()
            return nil
        }
        return await sync()
    }

    /// Whether the engine is paused until the app signs in again.
    public var isWaitingForAuthentication: Bool { schedule.isPausedForAuthentication }

    // MARK: The wait for changes

    /// Opens a wait for server changes unless one is open, waits are off or
    /// unsupported, the engine is stopped, offline or paused, a reconnect is
    /// pending, or the store is retired.
    func openChangeWait() async {
        guard started, !suspended, let timeout = options.changeWaitTimeout, changeWait.isSupported, !changeWait.isActive,
              changeWait.reconnectTimer == nil, schedule.isOnline, !schedule.isPausedForAuthentication,
              !options.kinds.isEmpty else { return }
        changeWait.isOpening = true
        let cursors: [String: PullCursor?]
        var spaces: [SpaceID: SpaceCursors]?
        do throws(StoreError) {
            cursors = try await store.cursors(for: options.kinds)
            // The shared spaces are followed as a pull names them, so a write
            // into one, or a membership change, ends the wait.
            if options.followsSharedSpaces { spaces = try await store.spaceCursors(for: options.kinds) }
        } catch {
            // A store that cannot be read opens no wait; the next sync stops
            // with its reason, which the status shows.
            changeWait.isOpening = false
            return
        }
        changeWait.isOpening = false
        // Checked again: the world may have changed during the read.
        guard started, changeWait.task == nil, changeWait.reconnectTimer == nil, schedule.isOnline,
              !schedule.isPausedForAuthentication else { return }
        changeWait.generation += 1
        changeWait.opened += 1
        let generation = changeWait.generation
        let transport = self.transport
        changeWait.openedAt = clock.now()
        changeWait.task = Task { [weak self] in
            let result: Result<ChangeWaitResult, TransportError>
            do throws(TransportError) {
                if let spaces {
                    result = .success(try await transport.waitForChanges(after: cursors, spaces: spaces, timeout: timeout))
                } else {
                    result = .success(try await transport.waitForChanges(after: cursors, timeout: timeout))
                }
            } catch {
                result = .failure(error)
            }
            await self?.changeWaitEnded(generation, result)
        }
        let overdue = changeWait.openedAt + EngineClock.milliseconds(timeout, roundingUp: true) + EngineClock.milliseconds(options.changeWaitMargin, roundingUp: true)
        changeWait.overdueTimer = clock.schedule(at: overdue) { [weak self] in await self?.changeWaitOverdue(generation) }
        publishStatus()
    }

    /// Closes the open wait (if any) and any pending reconnect.
    func closeChangeWait() {
        changeWait.generation += 1
        changeWait.task?.cancel()
        changeWait.task = nil
        changeWait.overdueTimer?.cancel()
        changeWait.overdueTimer = nil
        changeWait.reconnectTimer?.cancel()
        changeWait.reconnectTimer = nil
        changeWait.failuresInARow = 0
    }

    /// A wait answered (or failed). Changes pull at once, unless a sync runs
    /// (the wait is reopened when it ends, and finds what it missed); a
    /// timeout reopens at once; a failure reconnects after a backoff.
    private func changeWaitEnded(_ generation: Int, _ result: Result<ChangeWaitResult, TransportError>) async {
        guard generation == changeWait.generation, changeWait.task != nil else { return }
        changeWait.task = nil
        changeWait.overdueTimer?.cancel()
        changeWait.overdueTimer = nil
        changeWait.isHandlingAnswer = true
        defer {
            changeWait.isHandlingAnswer = false
            changeWaitFinished()
        }
        let now = clock.now()
        switch result {
        case .success(.changed):
            changeWait.failuresInARow = 0
            await pullAfterChangeWait(at: now)
        case .success(.timedOut):
            // A wait that gives up much sooner than asked is a server that
            // does not hold waits: reconnect with backoff, not in a loop.
            let timeout = options.changeWaitTimeout.map { EngineClock.milliseconds($0, roundingUp: true) } ?? 0
            if now - changeWait.openedAt < timeout / 2 {
                scheduleChangeWaitReconnect(at: now)
            } else if statusState.serverUnreachableFromChangeWait {
                // The server held a whole wait, so it is back: a pull puts
                // the status right rather than leave it unreachable until the next sync.
                changeWait.failuresInARow = 0
                await pullAfterChangeWait(at: now)
            } else {
                changeWait.failuresInARow = 0
                await openChangeWait()
            }
        case .success(.notSupported):
            changeWait.isSupported = false
            publishStatus()
        case .failure(.unauthorized(let reason)):
            // Refused credentials stop everything until the app signs in.
            recordForStatus(.failed(.authentication(reason: reason)))
            scheduler.withLock { $0.handle(.authenticationRefused, at: now) }
            arm()
            await refreshStatus()
        case .failure(let error):
            if case .serverUnreachable = error {
                // A dead server shows at once, not at the next pull.
                recordServerUnreachable(error)
            }
            scheduleChangeWaitReconnect(at: now)
        }
    }

    /// Pulls at once for a wait's answer, or when the backoff allows (the
    /// wait is reopened when that sync ends).
    private func pullAfterChangeWait(at now: Int64) async {
        scheduler.withLock { $0.handle(.pullRequested, at: now) }
        if schedule.isDue(at: now) {
            _ = await sync()
        } else {
            arm()
        }
    }

    /// Opens the next wait after the reconnect backoff.
    private func scheduleChangeWaitReconnect(at now: Int64) {
        changeWait.failuresInARow += 1
        let delay = max(1, backoffDelay(afterFailures: changeWait.failuresInARow))
        let generation = changeWait.generation
        changeWait.reconnectTimer = clock.schedule(at: now + delay) { [weak self] in
            await self?.changeWaitReconnect(generation)
        }
        publishStatus()
    }

    private func changeWaitReconnect(_ generation: Int) async {
        guard generation == changeWait.generation else { return }
        changeWait.reconnectTimer = nil
        await openChangeWait()
    }

    /// The wait neither answered nor failed within its timeout plus the
    /// margin: the connection is taken for lost, the wait cancelled and a new one opened.
    private func changeWaitOverdue(_ generation: Int) async {
        guard generation == changeWait.generation, let task = changeWait.task else { return }
        changeWait.overdueTimer = nil
        task.cancel()
        changeWait.task = nil
        changeWait.generation += 1
        changeWaitFinished()
        await openChangeWait()
    }

    private func changeWaitFinished() {
        changeWait.ended += 1
        let ended = changeWait.ended
        let ready = changeWait.endedWatchers.filter { $0.count <= ended }
        changeWait.endedWatchers.removeAll { $0.count <= ended }
        for watcher in ready { watcher.continuation.resume() }
    }

    /// Waits for changes opened so far.
    package var changeWaitsOpened: Int { changeWait.opened }

    /// Waits for changes that ended so far (answered, failed, or given up as hung).
    package var changeWaitsEnded: Int { changeWait.ended }

    /// Whether a wait for changes is open now.
    package var isWaitingForChanges: Bool { changeWait.task != nil }

    /// Whether a wait is open, being opened, being acted on, or reconnecting:
    /// one will end (or open) without anything else happening first.
    package var hasChangeWaitUnderway: Bool {
        changeWait.isActive || changeWait.isHandlingAnswer || changeWait.reconnectTimer != nil
    }

    /// Whether a failed wait is waiting out its reconnect backoff.
    package var isReconnectingChangeWait: Bool { changeWait.reconnectTimer != nil }

    /// Returns once `count` waits have ended and the engine has acted on
    /// them (the pull a change brought has finished; a replacement is open).
    package func untilChangeWaitsEnded(_ count: Int) async {
        if changeWait.ended >= count { return }
        await withCheckedContinuation { changeWait.endedWatchers.append((count, $0)) }
    }
}

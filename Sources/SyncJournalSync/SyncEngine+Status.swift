import SyncJournalProtocol
import SyncJournalStore

extension SyncEngine {
    /// The status now: activity, connectivity, counts and the last good sync.
    public var status: SyncStatus {
        get async {
            await readCounts()
            return currentStatus()
        }
    }

    /// The status as it changes, the current value first. Only the latest
    /// value is buffered: a slow reader skips to the newest, never lags.
    ///
    /// ```swift
    /// Task { @MainActor in
    ///     for await status in await engine.statusUpdates() { statusBar.show(status) }
    /// }
    /// ```
    public func statusUpdates() async -> AsyncStream<SyncStatus> {
        await readCounts()
        let (stream, continuation) = AsyncStream<SyncStatus>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = statusState.nextListener
        statusState.nextListener += 1
        statusState.listeners[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeStatusListener(id) }
        }
        let status = currentStatus()
        statusState.published = status
        continuation.yield(status)
        return stream
    }

    private func removeStatusListener(_ id: Int) {
        statusState.listeners[id] = nil
    }

    /// Notes a sync's outcome for the status.
    func recordForStatus(_ outcome: SyncOutcome) {
        statusState.syncActivity = nil
        statusState.lastOutcome = outcome
        statusState.serverUnreachable = statusState.serverUnreachableThisSync
        statusState.serverUnreachableFromChangeWait = false
        if case .ok = outcome {
            statusState.lastSuccessAt = clock.wallTime
            statusState.serverMismatch = nil
        }
        if case .failed(.serverMismatch(let mismatch)) = outcome { statusState.serverMismatch = mismatch }
    }

    /// Notes a wait for changes that failed because the server did not
    /// answer: the status reads unreachable as after a sync that found the
    /// server so, without waiting for the next pull. A running sync's own
    /// outcome replaces it when that sync ends.
    func recordServerUnreachable(_ error: TransportError) {
        statusState.lastOutcome = .retryLater(reason: error.description, retryAfter: nil)
        statusState.serverUnreachable = true
        statusState.serverUnreachableFromChangeWait = true
    }

    /// Marks what a running sync does now.
    func setActivity(_ activity: SyncStatus.Activity) {
        statusState.syncActivity = activity
        publishStatus()
    }

    /// Reads the counts from the store, then tells listeners.
    func refreshStatus() async {
        guard !statusState.listeners.isEmpty else { return }
        await readCounts()
        publishStatus()
    }

    /// Tells listeners the status, if it changed.
    func publishStatus() {
        guard !statusState.listeners.isEmpty else { return }
        let status = currentStatus()
        guard status != statusState.published else { return }
        statusState.published = status
        for listener in statusState.listeners.values { listener.yield(status) }
    }

    private func readCounts() async {
        // A retired or closed store keeps the last counts it had.
        let counts: OutboxCounts
        do { counts = try await store.outboxCounts() } catch { return }
        statusState.quarantined = counts.quarantined
        statusState.pending = counts.pending
        statusState.conflicts = counts.conflicts
        statusState.serverMismatch = counts.server.mismatch
        statusState.attachmentsToUpload = await store.attachmentsAwaitingUpload()
    }

    private func currentStatus() -> SyncStatus {
        let activity: SyncStatus.Activity = statusState.syncActivity ?? (changeWait.task != nil ? .waitingForChanges : .idle)
        return SyncStatus(activity: activity, connectivity: connectivity(), pendingOperations: statusState.pending,
                          quarantinedOperations: statusState.quarantined, conflicts: statusState.conflicts,
                          lastSuccessfulSyncAt: statusState.lastSuccessAt, lostSpaces: statusState.lostSpaces.sorted(by: <),
                          attachmentsToUpload: statusState.attachmentsToUpload, transfers: statusState.transfers)
    }

    private func connectivity() -> SyncStatus.Connectivity {
        if started, !schedule.isOnline { return .offline }
        if let mismatch = statusState.serverMismatch { return .serverChanged(mismatch) }
        switch statusState.lastOutcome {
        case nil, .ok?, .deadlineReached?, .skipped(.suspended)?: return .online
        case .skipped(.offline)?: return .noConnection
        case .retryLater(let reason, _)?:
            return statusState.serverUnreachable ? .serverUnreachable(reason: reason) : .serverBusy(reason: reason)
        case .failed(.authentication(let reason))?:
            return schedule.isPausedForAuthentication || !started ? .authenticationNeeded(reason: reason) : .online
        case .failed(.serverMismatch(let mismatch))?: return .serverChanged(mismatch)
        case .failed(let failure)?: return .failing(failure)
        }
    }
}

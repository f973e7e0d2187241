import SyncJournalStore

// A background task has a deadline (BGAppRefreshTask's expiration, the
// remaining time of beginBackgroundTask). The sync stops between requests,
// where everything before is journaled, so a cut is never half-done; the
// caller gets its answer at the deadline even while a request is still out.
extension SyncEngine {
    /// Syncs as ``sync()`` does (push what is queued, then pull), but returns
    /// within `budget`, measured on the engine's ``SyncClock`` from now.
    ///
    /// When the sync ends first, this is its outcome. When the time is up
    /// first, the answer is ``SyncOutcome/deadlineReached`` at once; the sync
    /// starts no further request, and a request already out ends on its own:
    /// its reply is kept if it comes (or dropped, if the store is suspended
    /// meanwhile), and its operations otherwise stay queued and go again
    /// with their own ids. A pull keeps every page journaled before the cut,
    /// and the next sync goes on from that cursor. A sync already running
    /// adopts the earlier deadline. A budget of zero or less returns at once.
    ///
    /// ```swift
    /// // in a background task that must end within 25 seconds:
    /// let outcome = await engine.sync(within: .seconds(25))
    /// if outcome == .deadlineReached { /* ask for another background task */ }
    /// ```
    public func sync(within budget: Duration) async -> SyncOutcome {
        let now = clock.now()
        let (deadline, overflow) = now.addingReportingOverflow(EngineClock.milliseconds(budget, roundingUp: false))
        return await sync(before: overflow ? (budget > .zero ? .max : .min) : deadline)
    }

    /// ``sync(within:)`` with the deadline in clock milliseconds since the
    /// clock's start (for tests and the simulator).
    package func sync(before deadline: Int64) async -> SyncOutcome {
        if suspended { return .skipped(.suspended) }
        guard clock.now() < deadline else { return .deadlineReached }
        runDeadline = min(runDeadline ?? deadline, deadline)
        let task = runningSync()
        let answer = FirstAnswer()
        let timer = clock.schedule(at: deadline) { await answer.give(.deadlineReached) }
        Task { await answer.give(await task.value) }
        let outcome = await answer.wait()
        timer.cancel()
        return outcome
    }

    /// Returns once no sync runs: a sync cut by its deadline may still be
    /// finishing the request it had out (for tests).
    package func untilSyncEnded() async {
        while let running { _ = await running.value }
    }
}

/// The first of two answers (a sync's outcome or its deadline): one caller
/// waits for whichever is given first; later ones are ignored.
actor FirstAnswer {
    private var given: SyncOutcome?
    private var waiter: CheckedContinuation<SyncOutcome, Never>?

    /// Gives `outcome`, unless an answer was given already.
    func give(_ outcome: SyncOutcome) {
        guard given == nil else { return }
        given = outcome
        waiter?.resume(returning: outcome)
        waiter = nil
    }

    /// The first answer given; waits for it.
    func wait() async -> SyncOutcome {
        if let given { return given }
        return await withCheckedContinuation { waiter = $0 }
    }
}

import SyncJournalStore

// The engine's half of an app's suspension: nothing new starts, and a
// request already out is left to end on its own. It is not waited for: an
// app being suspended has seconds, and a request can take longer. Its
// operations stay queued and go again with their own ids after resume.
extension SyncEngine {
    /// Pauses the engine before the app is suspended: the timer and the wait
    /// for server changes stop, a running sync starts no further request, and
    /// every ``sync()`` returns ``SyncOutcome/skipped(_:)`` with
    /// ``SyncOutcome/SkipReason/suspended`` until ``resume()``.
    ///
    /// It returns at once, without waiting for a request in flight; then
    /// suspend the store (``LocalStore/suspend()``), which hands such
    /// requests' operations back to the queue: a reply that arrives later is
    /// not kept, and they are resent with the same ids after resuming.
    ///
    /// ```swift
    /// // the scene entered the background:
    /// await engine.suspend()
    /// await store.suspend()
    /// ```
    public func suspend() async {
        guard !suspended else { return }
        scheduler.withLock { state in
            state.suspended = true
            state.cancelTimer()
        }
        closeChangeWait()
        publishStatus()
    }

    /// Resumes after ``suspend()``, once the store has resumed
    /// (``LocalStore/resume()``): a started engine schedules again, reopens
    /// the wait for changes, and syncs at once, as
    /// ``appDidBecomeActive()`` does. Returns that sync's outcome, or `nil`
    /// when none ran now (not started, not suspended, offline or backing off).
    ///
    /// ```swift
    /// // the scene became active again:
    /// try await store.resume()
    /// await engine.resume()
    /// ```
    @discardableResult
    public func resume() async -> SyncOutcome? {
        guard suspended else { return nil }
        scheduler.withLock { $0.suspended = false }
        guard started else { return nil }
        await refreshPendingWork()
        return await appDidBecomeActive()
    }

    /// Whether the engine is suspended (``suspend()``).
    public var isSuspended: Bool { suspended }

    /// Why the running sync must start no further request: the engine was
    /// suspended, or the deadline of ``sync(within:)`` has come.
    func stopBeforeNextRequest() -> SyncOutcome? {
        if suspended { return .skipped(.suspended) }
        if let runDeadline, clock.now() >= runDeadline { return .deadlineReached }
        return nil
    }

    /// One sync. A sync that a suspension cut short ends as skipped: what
    /// failed then (the store refusing to write, a reply that came too late)
    /// is the suspension, not the server's or the data's fault.
    func runUnlessSuspended() async -> SyncOutcome {
        let outcome = await run()
        switch outcome {
        case .ok: return outcome
        case .failed(.store(.suspended)): return .skipped(.suspended)
        default: return suspended ? .skipped(.suspended) : outcome
        }
    }
}

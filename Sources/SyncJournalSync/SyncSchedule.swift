import SyncJournalProtocol
/// When to sync next: a pure state machine, with no I/O and no clock of its
/// own. Time is passed in as milliseconds (any monotonic origin), randomness
/// through a generator, so a test can drive it with a virtual clock and a
/// seeded generator.
///
/// It keeps one promise: while there is pending work, the device is online
/// and no sync is running, ``nextAttemptAt`` is never `nil` (the queue never
/// stalls) and never earlier than ``backoffUntil`` (no attempt storm).
///
/// - A local edit schedules an attempt ``RetryPolicy/editCoalescingMilliseconds``
///   later; further edits in a burst do not postpone it.
/// - Connectivity returning schedules an attempt at once (or when the
///   backoff expires); going offline cancels it.
/// - A transient failure (or any failure) backs off exponentially with full
///   jitter, honouring a server's retry-after; a success resets the backoff.
///   Being offline is not a failure and does not grow the backoff: a sync
///   that found no connection while the app reports the device online looks
///   again after ``RetryPolicy/offlineProbeMilliseconds`` (or sooner, after an
///   edit, or at once when the app reports connectivity). Failures
///   counted here are the scheduler's only: they say nothing about an
///   operation's permanent-failure budget.
///
/// ```swift
/// var schedule = SyncSchedule(policy: RetryPolicy())
/// var generator = SystemRandomNumberGenerator()
/// schedule.handle(.localEdit, at: now, using: &generator)
/// // later, whenever a timer fires:
/// if schedule.isDue(at: now) {
///     schedule.handle(.syncStarted, at: now, using: &generator)
///     // … sync, then report how it went:
///     schedule.handle(.syncFinished(.succeeded, outboxEmpty: true), at: now, using: &generator)
/// }
/// ```
package struct SyncSchedule: Sendable, Hashable {
    /// Something the scheduler needs to know about.
    ///
    /// ```swift
    /// schedule.handle(.connectivityChanged(online: true), at: now, using: &generator)
    /// ```
    package enum Event: Sendable, Hashable {
        /// The app queued an operation: the outbox is not empty.
        case localEdit
        /// The app reports that the device went online or offline.
        case connectivityChanged(online: Bool)
        /// A sync began.
        case syncStarted
        /// A sync ended with `Result`; `outboxEmpty` says whether anything is
        /// still queued (edits made during the sync, or operations left over).
        /// The same as ``syncEnded(_:pendingWorkReadyAt:)`` with work ready now.
        case syncFinished(Result, outboxEmpty: Bool)
        /// A sync ended with `Result`; `pendingWorkReadyAt` is the earliest
        /// time a queued operation may be sent (operations that failed wait
        /// out their own backoff), or `nil` when nothing can be sent.
        case syncEnded(Result, pendingWorkReadyAt: Int64?)
        /// What can be sent changed outside a sync (the engine started, the
        /// app released a quarantined operation): `nil` when nothing can be sent.
        case pendingWorkChanged(readyAt: Int64?)
    }

    /// How a sync ended, as the scheduler sees it.
    ///
    /// ```swift
    /// let result: SyncSchedule.Result = .transientFailure(retryAfterMilliseconds: 30_000)  // a 503 with Retry-After: 30
    /// ```
    package enum Result: Sendable, Hashable {
        /// The server answered: the backoff resets.
        case succeeded
        /// There was no connection: not a failure (the backoff does not
        /// grow); unless the app reported the device offline, the next look is
        /// an offline probe later (``RetryPolicy/offlineProbeMilliseconds``).
        case offline
        /// Worth retrying later (timeout, 5xx, 429), with the server's
        /// retry-after in milliseconds if it gave one.
        case transientFailure(retryAfterMilliseconds: Int64?)
        /// The sync failed some other way; it is retried with backoff too.
        case failed
    }

    /// The delays this schedule uses.
    ///
    /// ```swift
    /// schedule.policy.editCoalescingMilliseconds = 250
    /// ```
    package var policy: RetryPolicy

    /// Whether the app last reported the device online.
    ///
    /// ```swift
    /// if !schedule.isOnline { showOfflineBadge() }
    /// ```
    package private(set) var isOnline: Bool

    /// Whether the outbox holds operations still to send.
    ///
    /// ```swift
    /// if schedule.hasPendingWork { showPendingBadge() }
    /// ```
    package private(set) var hasPendingWork: Bool

    /// Whether a sync is running (between ``Event/syncStarted`` and
    /// ``Event/syncFinished(_:outboxEmpty:)``).
    ///
    /// ```swift
    /// if schedule.isSyncing { showSpinner() }
    /// ```
    package private(set) var isSyncing: Bool

    /// Failed syncs in a row since the last success; offline syncs do not count.
    ///
    /// ```swift
    /// if schedule.consecutiveFailures > 3 { showServerTroubleBanner() }
    /// ```
    package private(set) var consecutiveFailures: Int

    /// No attempt is scheduled before this time (milliseconds), or `nil` when
    /// there is no backoff.
    ///
    /// ```swift
    /// if let until = schedule.backoffUntil { print("backing off until \(until)") }
    /// ```
    package private(set) var backoffUntil: Int64?

    /// When the next sync attempt is due (milliseconds), or `nil` when none
    /// is needed or possible (nothing pending, offline, or syncing).
    ///
    /// ```swift
    /// if let at = schedule.nextAttemptAt { armTimer(firingAt: at) }
    /// ```
    package private(set) var nextAttemptAt: Int64?

    /// A schedule with no backoff. If the outbox already holds work (as after
    /// a restart) and the device is online, an attempt is due at `now`.
    ///
    /// ```swift
    /// var schedule = SyncSchedule(isOnline: true, hasPendingWork: !outbox.isEmpty, at: now)
    /// ```
    package init(policy: RetryPolicy = RetryPolicy(), isOnline: Bool = true, hasPendingWork: Bool = false, at now: Int64 = 0) {
        self.policy = policy
        self.isOnline = isOnline
        self.hasPendingWork = hasPendingWork
        self.isSyncing = false
        self.consecutiveFailures = 0
        self.backoffUntil = nil
        self.nextAttemptAt = isOnline && hasPendingWork ? now : nil
    }

    /// Whether a sync should start at `now`: there is pending work, the
    /// device is online, no sync runs, and the scheduled time has come.
    ///
    /// ```swift
    /// if schedule.isDue(at: clock.now) { startSync() }
    /// ```
    package func isDue(at now: Int64) -> Bool {
        guard hasPendingWork, isOnline, !isSyncing, let at = nextAttemptAt else { return false }
        return now >= at
    }

    /// Updates the schedule for `event`, which happened at `now`
    /// (milliseconds). The generator draws the jitter of a backoff.
    ///
    /// ```swift
    /// var generator = SystemRandomNumberGenerator()
    /// schedule.handle(.syncFinished(.transientFailure(retryAfterMilliseconds: nil), outboxEmpty: false),
    ///                 at: now, using: &generator)
    /// // schedule.nextAttemptAt == schedule.backoffUntil
    /// ```
    package mutating func handle(_ event: Event, at now: Int64, using generator: inout some RandomNumberGenerator) {
        switch event {
        case .localEdit:
            hasPendingWork = true
            guard isOnline, !isSyncing else { return }
            let coalesced = Self.adding(now, max(0, policy.editCoalescingMilliseconds))
            let candidate = max(backoffUntil ?? coalesced, coalesced)
            // An attempt already scheduled earlier stands: later edits of a
            // burst ride along instead of postponing it.
            nextAttemptAt = min(nextAttemptAt ?? candidate, candidate)

        case .connectivityChanged(online: let online):
            isOnline = online
            if !online {
                nextAttemptAt = nil
            } else if hasPendingWork, !isSyncing {
                // Online again (or still, after a sync that found no
                // connection): at once, unless a backoff says otherwise.
                let candidate = max(backoffUntil ?? now, now)
                nextAttemptAt = min(nextAttemptAt ?? candidate, candidate)
            }

        case .syncStarted:
            isSyncing = true
            nextAttemptAt = nil

        case .syncFinished(let result, outboxEmpty: let outboxEmpty):
            handle(.syncEnded(result, pendingWorkReadyAt: outboxEmpty ? nil : now), at: now, using: &generator)

        case .syncEnded(let result, pendingWorkReadyAt: let readyAt):
            isSyncing = false
            hasPendingWork = readyAt != nil
            nextAttemptAt = nil
            switch result {
            case .succeeded:
                consecutiveFailures = 0
                backoffUntil = nil
                if let readyAt, isOnline {
                    nextAttemptAt = max(Self.adding(now, max(0, policy.editCoalescingMilliseconds)), readyAt)
                }
            case .offline:
                // The app's report of connectivity stands; the transport's
                // "no connection" only delays the next look.
                if let readyAt, isOnline {
                    let probe = Self.adding(now, max(1, policy.offlineProbeMilliseconds))
                    nextAttemptAt = max(probe, readyAt, backoffUntil ?? probe)
                }
            case .transientFailure(retryAfterMilliseconds: let retryAfter):
                backOff(at: now, retryAfter: retryAfter, readyAt: readyAt, using: &generator)
            case .failed:
                backOff(at: now, retryAfter: nil, readyAt: readyAt, using: &generator)
            }

        case .pendingWorkChanged(readyAt: let readyAt):
            hasPendingWork = readyAt != nil
            guard !isSyncing else { return }
            if let readyAt, isOnline {
                nextAttemptAt = max(readyAt, backoffUntil ?? readyAt, now)
            } else {
                nextAttemptAt = nil
            }
        }
    }

    /// Counts a failure and waits the jittered backoff or the server's
    /// retry-after, whichever is longer.
    private mutating func backOff(at now: Int64, retryAfter: Int64?, readyAt: Int64?, using generator: inout some RandomNumberGenerator) {
        if consecutiveFailures < Int.max { consecutiveFailures += 1 }
        let jittered = policy.backoffDelay(afterFailures: consecutiveFailures, using: &generator)
        let until = Self.adding(now, max(jittered, retryAfter ?? 0, 0))
        backoffUntil = until
        if hasPendingWork, isOnline {
            nextAttemptAt = max(until, readyAt ?? until)
        }
    }

    /// `time + delay`, saturating instead of overflowing.
    private static func adding(_ time: Int64, _ delay: Int64) -> Int64 {
        let (sum, overflow) = time.addingReportingOverflow(delay)
        return overflow ? (delay > 0 ? Int64.max : Int64.min) : sum
    }
}

import SyncJournalProtocol
/// When to sync next: a pure state machine, with no I/O and no clock of its
/// own. Time is passed in as milliseconds (any monotonic origin), randomness
/// through a generator, so a test can drive it with a virtual clock and a
/// seeded generator.
///
/// It keeps one promise: while there is pending work, the device is online,
/// the server has not refused the credentials and no sync is running,
/// ``nextAttemptAt`` is never `nil` (the queue never stalls) and never
/// earlier than ``backoffUntil`` (no attempt storm).
///
/// - With nothing pending, a sync still runs to pull: every
///   ``idlePullMilliseconds`` after the last sync, and at once on
///   ``Event/pullRequested`` (the app became active, the server announced
///   changes). A sync pushes before it pulls, so a pull never overlaps a push.
/// - A refused credential (``Result/authenticationNeeded``) pauses
///   everything until ``Event/authenticationRenewed``.
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
        /// A pull is wanted now: the app became active, or the server
        /// announced changes. It waits for a running sync and for the backoff.
        case pullRequested
        /// The app has new credentials: the pause ends and a sync is due at once.
        case authenticationRenewed
        /// The server refused the credentials outside a sync (say, to a
        /// wait for changes): nothing more is scheduled until
        /// ``authenticationRenewed``.
        case authenticationRefused
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
        /// The server refused the credentials: nothing more is scheduled
        /// until ``Event/authenticationRenewed`` or a sync started by hand.
        case authenticationNeeded
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
    /// is needed or possible (nothing pending and no pull wanted, offline,
    /// syncing, or paused until the app signs in again): the earlier of the
    /// push attempt and the pull attempt.
    ///
    /// ```swift
    /// if let at = schedule.nextAttemptAt { armTimer(firingAt: at) }
    /// ```
    package var nextAttemptAt: Int64? {
        guard isOnline, !isSyncing, !isPausedForAuthentication else { return nil }
        return [hasPendingWork ? pushAttemptAt : nil, pullAttemptAt].compactMap { $0 }.min()
    }

    /// When pending work is next sent (milliseconds), or `nil`.
    package private(set) var pushAttemptAt: Int64?

    /// When a sync with nothing to push is next due to pull (milliseconds),
    /// or `nil`: the idle interval after the last sync, or at once after the
    /// app became active or the server announced changes.
    package private(set) var pullAttemptAt: Int64?

    /// Pull this often (milliseconds) while nothing is pending; `nil`: only
    /// when asked (``Event/pullRequested``).
    package var idlePullMilliseconds: Int64?

    /// A pull was asked for while a sync ran: another sync follows it, since
    /// the running one may have pulled before the change.
    package private(set) var pullsAfterSync = false

    /// The server refused the credentials: nothing is scheduled until the
    /// app signs in again (``Event/authenticationRenewed``) or a sync started
    /// by hand gets past the server.
    package private(set) var isPausedForAuthentication = false

    /// A schedule with no backoff. If the outbox already holds work (as after
    /// a restart) and the device is online, an attempt is due at `now`.
    ///
    /// ```swift
    /// var schedule = SyncSchedule(isOnline: true, hasPendingWork: !outbox.isEmpty, at: now)
    /// ```
    package init(policy: RetryPolicy = RetryPolicy(), isOnline: Bool = true, hasPendingWork: Bool = false, at now: Int64 = 0,
                 idlePullMilliseconds: Int64? = nil) {
        self.policy = policy
        self.isOnline = isOnline
        self.hasPendingWork = hasPendingWork
        self.isSyncing = false
        self.consecutiveFailures = 0
        self.backoffUntil = nil
        self.pushAttemptAt = isOnline && hasPendingWork ? now : nil
        self.idlePullMilliseconds = idlePullMilliseconds.map { max(1, $0) }
    }

    /// Whether a sync should start at `now`: there is pending work, the
    /// device is online, no sync runs, and the scheduled time has come.
    ///
    /// ```swift
    /// if schedule.isDue(at: clock.now) { startSync() }
    /// ```
    package func isDue(at now: Int64) -> Bool {
        guard let at = nextAttemptAt else { return false }
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
            pushAttemptAt = min(pushAttemptAt ?? candidate, candidate)

        case .connectivityChanged(online: let online):
            isOnline = online
            if !online {
                pushAttemptAt = nil
                pullAttemptAt = nil
            } else if idlePullMilliseconds != nil, !isSyncing {
                // Back online with idle pulls on: what changed meanwhile is pulled at once.
                requestPull(at: now)
            }
            if online, hasPendingWork, !isSyncing {
                // Online again (or still, after a sync that found no
                // connection): at once, unless a backoff says otherwise.
                let candidate = max(backoffUntil ?? now, now)
                pushAttemptAt = min(pushAttemptAt ?? candidate, candidate)
            }

        case .syncStarted:
            isSyncing = true
            pushAttemptAt = nil
            pullAttemptAt = nil
            pullsAfterSync = false

        case .syncFinished(let result, outboxEmpty: let outboxEmpty):
            handle(.syncEnded(result, pendingWorkReadyAt: outboxEmpty ? nil : now), at: now, using: &generator)

        case .syncEnded(let result, pendingWorkReadyAt: let readyAt):
            isSyncing = false
            hasPendingWork = readyAt != nil
            pushAttemptAt = nil
            pullAttemptAt = nil
            if case .authenticationNeeded = result {
                isPausedForAuthentication = true
                pullsAfterSync = false
                return
            }
            isPausedForAuthentication = false
            defer { schedulePullAfterSync(at: now) }
            switch result {
            case .authenticationNeeded:
                break
            case .succeeded:
                consecutiveFailures = 0
                backoffUntil = nil
                if let readyAt, isOnline {
                    pushAttemptAt = max(Self.adding(now, max(0, policy.editCoalescingMilliseconds)), readyAt)
                }
            case .offline:
                // The app's report of connectivity stands; the transport's
                // "no connection" only delays the next look.
                if let readyAt, isOnline {
                    let probe = Self.adding(now, max(1, policy.offlineProbeMilliseconds))
                    pushAttemptAt = max(probe, readyAt, backoffUntil ?? probe)
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
                pushAttemptAt = max(readyAt, backoffUntil ?? readyAt, now)
            } else {
                pushAttemptAt = nil
            }

        case .pullRequested:
            if isSyncing {
                pullsAfterSync = true
            } else if isOnline {
                requestPull(at: now)
            }

        case .authenticationRefused:
            isPausedForAuthentication = true
            pushAttemptAt = nil
            pullAttemptAt = nil
            pullsAfterSync = false

        case .authenticationRenewed:
            guard isPausedForAuthentication else { return }
            isPausedForAuthentication = false
            // Times noted while paused are stale: everything is due now.
            pushAttemptAt = nil
            pullAttemptAt = nil
            guard isOnline, !isSyncing else { return }
            if hasPendingWork { pushAttemptAt = now }
            requestPull(at: now)
        }
    }

    /// A pull at once, or when the backoff ends; an earlier one already due stands.
    private mutating func requestPull(at now: Int64) {
        let candidate = max(backoffUntil ?? now, now)
        pullAttemptAt = min(pullAttemptAt ?? candidate, candidate)
    }

    /// After a sync: a pull asked for during it follows at once (or after the
    /// backoff); otherwise the next idle pull is one interval later (never
    /// before the backoff ends).
    private mutating func schedulePullAfterSync(at now: Int64) {
        defer { pullsAfterSync = false }
        guard isOnline else { return }
        if pullsAfterSync {
            requestPull(at: now)
        } else if let interval = idlePullMilliseconds {
            let idle = Self.adding(now, interval)
            pullAttemptAt = max(idle, backoffUntil ?? idle)
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
            pushAttemptAt = max(until, readyAt ?? until)
        }
    }

    /// `time + delay`, saturating instead of overflowing.
    private static func adding(_ time: Int64, _ delay: Int64) -> Int64 {
        let (sum, overflow) = time.addingReportingOverflow(delay)
        return overflow ? (delay > 0 ? Int64.max : Int64.min) : sum
    }
}

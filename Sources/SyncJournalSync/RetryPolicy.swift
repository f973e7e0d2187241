import SyncJournalProtocol
/// How long to wait before syncing again: after a local edit (coalescing a
/// burst of edits into one attempt) and after transient failures
/// (exponential backoff with full jitter, capped).
///
/// Full jitter draws each delay uniformly from `0...bound`, where the bound
/// doubles with every consecutive failure up to a cap. Spreading retries this
/// way keeps a fleet of devices from hammering a recovering server in step.
/// The engine works to the millisecond: finer parts of a delay are dropped.
///
/// ```swift
/// let policy = RetryPolicy(baseDelay: .seconds(1), maximumDelay: .seconds(60))
/// let engine = SyncEngine(store: store, transport: transport,
///                         options: .init(kinds: ["pin"], retryPolicy: policy))
/// ```
public struct RetryPolicy: Sendable, Hashable {
    /// The backoff bound after the first failure; the bound doubles with each
    /// further consecutive failure. A negative value acts as zero.
    ///
    /// ```swift
    /// var policy = RetryPolicy()
    /// policy.baseDelay = .milliseconds(250)
    /// ```
    public var baseDelay: Duration

    /// The cap on the backoff bound: no delay is ever drawn above it, however
    /// many failures came before. A negative value acts as zero.
    ///
    /// ```swift
    /// let policy = RetryPolicy(maximumDelay: .seconds(30))  // never wait more than 30 s
    /// ```
    public var maximumDelay: Duration

    /// How long after a local edit the sync attempt happens, so that a burst
    /// of edits goes out in one attempt. A negative value acts as zero.
    ///
    /// ```swift
    /// let policy = RetryPolicy(editCoalescing: .milliseconds(200))
    /// ```
    public var editCoalescing: Duration

    /// How long after a sync that found no connection (while the app still
    /// reports the device online) the engine looks again. Offline is not a
    /// failure: this delay never grows, and an app that reports connectivity
    /// with ``SyncEngine/setOnline(_:)`` is answered at once instead. A value
    /// below a millisecond acts as one.
    ///
    /// ```swift
    /// let policy = RetryPolicy(offlineProbe: .seconds(60))   // look once a minute
    /// ```
    public var offlineProbe: Duration

    /// A policy with the given delays.
    ///
    /// ```swift
    /// let standard = RetryPolicy()  // 1 s base, 5 min cap, 0.5 s edit coalescing, 30 s offline probe
    /// let eager = RetryPolicy(baseDelay: .milliseconds(100), maximumDelay: .seconds(5))
    /// ```
    public init(
        baseDelay: Duration = .seconds(1),
        maximumDelay: Duration = .seconds(300),
        editCoalescing: Duration = .milliseconds(500),
        offlineProbe: Duration = .seconds(30)
    ) {
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.editCoalescing = editCoalescing
        self.offlineProbe = offlineProbe
    }

    /// ``baseDelay`` in whole milliseconds.
    package var baseDelayMilliseconds: Int64 {
        get { EngineClock.milliseconds(baseDelay, roundingUp: false) }
        set { baseDelay = .milliseconds(newValue) }
    }

    /// ``maximumDelay`` in whole milliseconds.
    package var maximumDelayMilliseconds: Int64 {
        get { EngineClock.milliseconds(maximumDelay, roundingUp: false) }
        set { maximumDelay = .milliseconds(newValue) }
    }

    /// ``editCoalescing`` in whole milliseconds.
    package var editCoalescingMilliseconds: Int64 {
        get { EngineClock.milliseconds(editCoalescing, roundingUp: false) }
        set { editCoalescing = .milliseconds(newValue) }
    }

    /// ``offlineProbe`` in whole milliseconds.
    package var offlineProbeMilliseconds: Int64 {
        get { EngineClock.milliseconds(offlineProbe, roundingUp: false) }
        set { offlineProbe = .milliseconds(newValue) }
    }

    /// The largest delay ``backoffDelay(afterFailures:using:)`` can draw after
    /// `n` consecutive failures: `min(cap, base * 2^(n-1))` for `n >= 1`,
    /// computed without overflow for any `n`; 0 for `n <= 0`.
    ///
    /// ```swift
    /// RetryPolicy().backoffBound(afterFailures: 1)    // 1_000
    /// RetryPolicy().backoffBound(afterFailures: 4)    // 8_000
    /// RetryPolicy().backoffBound(afterFailures: 100)  // 300_000 (the cap)
    /// ```
    package func backoffBound(afterFailures n: Int) -> Int64 {
        guard n >= 1 else { return 0 }
        let base = max(0, baseDelayMilliseconds)
        let cap = max(0, maximumDelayMilliseconds)
        guard base > 0, cap > 0 else { return 0 }
        let shift = n - 1
        // base << shift exceeds cap exactly when base > cap >> shift; checking
        // that first keeps the shift from overflowing.
        if shift >= Int64.bitWidth - 1 || base > cap >> Int64(shift) {
            return cap
        }
        return min(cap, base << Int64(shift))
    }

    /// A backoff delay in milliseconds after `n` consecutive transient
    /// failures, with full jitter: uniform in
    /// `0...min(maximumDelayMilliseconds, baseDelayMilliseconds * 2^(n-1))`
    /// for `n >= 1` (no overflow however large `n` is), and 0 for `n <= 0`.
    ///
    /// Pass a seeded generator to make delays reproducible in tests.
    ///
    /// ```swift
    /// var generator = SystemRandomNumberGenerator()
    /// let policy = RetryPolicy()
    /// policy.backoffDelay(afterFailures: 0, using: &generator)   // 0
    /// policy.backoffDelay(afterFailures: 2, using: &generator)   // 0...2_000
    /// policy.backoffDelay(afterFailures: 50, using: &generator)  // 0...300_000
    /// ```
    package func backoffDelay(afterFailures n: Int, using generator: inout some RandomNumberGenerator) -> Int64 {
        let bound = backoffBound(afterFailures: n)
        guard bound > 0 else { return 0 }
        return Int64.random(in: 0...bound, using: &generator)
    }
}

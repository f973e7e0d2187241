/// The engine's bookkeeping of its wait for server changes: at most one
/// wait is open; each has a generation, so the answer of a wait the engine
/// already gave up (closed, or replaced as hung) is ignored.
struct ChangeWaitState: Sendable {
    /// The open wait's task.
    var task: Task<Void, Never>?
    /// The generation of the open (or last) wait.
    var generation = 0
    /// When the open wait was opened (clock milliseconds).
    var openedAt: Int64 = 0
    /// Fires when the open wait is overdue (its timeout plus the margin).
    var overdueTimer: EngineTimer?
    /// Fires when a wait that failed may be opened again.
    var reconnectTimer: EngineTimer?
    /// Waits in a row that failed, or came back too soon: the exponent of the reconnect backoff.
    var failuresInARow = 0
    /// Cleared when the transport answers that it cannot wait.
    var isSupported = true
    /// Set while a wait is being opened (across the store read of the cursors).
    var isOpening = false
    /// Set while the engine acts on a wait's answer (the pull a change brings).
    var isHandlingAnswer = false
    /// Waits opened so far.
    var opened = 0
    /// Waits that ended so far (answered, failed, or given up as hung).
    var ended = 0
    /// Callers waiting for `ended` to reach a count.
    var endedWatchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// Whether a wait is open or being opened.
    var isActive: Bool { task != nil || isOpening }
}

import SyncJournalProtocol
/// How a sync ended. Being offline is a normal outcome, not an error.
public enum SyncOutcome: Sendable, Hashable, CustomStringConvertible {
    /// Pushed and pulled everything: operations acknowledged, rows pulled,
    /// conflicts surfaced.
    case ok(pushed: Int, pulled: Int, conflicts: Int)
    /// Nothing was attempted or changed; the view keeps its data.
    case skipped(SkipReason)
    /// The server is overloaded or failing (a timeout, 5xx, 429): the sync
    /// stopped and is retried after a backoff, no sooner than the server's
    /// retry-after. No operation's permanent-failure budget was used.
    case retryLater(reason: String, retryAfter: Duration?)
    /// The sync stopped; what was journaled before the failure stays.
    case failed(SyncFailure)
    /// The deadline of ``SyncEngine/sync(within:)`` came first. Nothing is
    /// half-done: what was journaled stays, operations whose reply did not
    /// come stay queued and go again with their own ids, and a pull goes on
    /// from its last journaled cursor. Sync again when there is time.
    case deadlineReached

    /// Why a sync was skipped.
    public enum SkipReason: Sendable, Hashable, CustomStringConvertible {
        /// No connection.
        case offline
        /// The engine is suspended (``SyncEngine/suspend()``).
        case suspended

        /// `offline` or `suspended`.
        public var description: String {
            switch self {
            case .offline: return "offline"
            case .suspended: return "suspended"
            }
        }
    }

    /// `ok`, `skipped`, `retry`, `error` or `deadline`, as the scenario files name them.
    package var name: String {
        switch self {
        case .ok: return "ok"
        case .skipped: return "skipped"
        case .retryLater: return "retry"
        case .failed: return "error"
        case .deadlineReached: return "deadline"
        }
    }

    /// One line for people.
    public var description: String {
        switch self {
        case .ok(let pushed, let pulled, let conflicts): return "ok (pushed \(pushed), pulled \(pulled), conflicts \(conflicts))"
        case .skipped(let reason): return "skipped (\(reason))"
        case .retryLater(let reason, let after): return "retry later: \(reason)" + (after.map { " (after \($0))" } ?? "")
        case .failed(let failure): return "error: \(failure)"
        case .deadlineReached: return "stopped at the deadline; the rest is still queued"
        }
    }
}

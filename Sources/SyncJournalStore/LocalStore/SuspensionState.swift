import SyncJournalProtocol

/// What a store keeps about suspension (``LocalStore/suspend()``), in memory only.
struct SuspensionState {
    /// A suspension is finishing the writes queued before it: later writes
    /// are refused with ``StoreError/suspended(path:)`` meanwhile.
    var suspending = false
    /// Operations that were in flight when the store suspended. Another
    /// process may send them while this one sleeps, so a reply to such a
    /// hand-over is never kept: the operation stays queued (marked sent) and
    /// goes again with its own id, which the server answers from its record
    /// of the first delivery.
    var abandoned: Set<OperationID> = []
    /// Callers of ``LocalStore/suspend()`` or ``LocalStore/resume()`` waiting
    /// for the one running to end.
    var waiters: [CheckedContinuation<Void, Never>] = []
    /// Whether a suspend or resume is running.
    var changing = false
}

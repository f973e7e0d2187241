import SyncJournalProtocol
import SyncJournalCore

extension LocalStore {
    /// What the device knows of its server: the identity it synced with,
    /// the latest stamp it took from it, and a mismatch that stopped sync.
    package func knownServer() throws(StoreError) -> KnownServer {
        try checkReadable()
        return state.server
    }

    /// Journals a change to what the device knows of its server, durably,
    /// before the engine acts on it (an identity learned before any row of
    /// its page is kept; a mismatch before the sync stops).
    package func recordServer(_ change: ServerEvent) async throws(StoreError) {
        try await submit(sharesState: false) { (_) throws(StoreError) in [.server(change)] }
    }

    /// Plans and journals, in one record, what a reconciliation must queue
    /// for the server whose every row of `kinds` is `serverRows`
    /// (``StoreState/reuploadPlan(serverRows:kinds:sameHistory:queuedAt:makeID:)``),
    /// against the state as the write is formed. Returns the plan.
    package func queueReuploads(serverRows: [RecordKey: ServerRow], kinds: Set<String>,
                                sameHistory: Bool) async throws(StoreError) -> ReuploadPlan {
        let now = options.clock.wallTimeMilliseconds
        let result = ReuploadPlanDraft()
        try await submit(sharesState: false) { (staged) throws(StoreError) in
            let plan = staged.reuploadPlan(serverRows: serverRows, kinds: kinds, sameHistory: sameHistory, queuedAt: now,
                                           makeID: { OperationID.random() })
            result.plan = plan
            return plan.isEmpty ? [] : [.reuploads(plan)]
        }
        return result.plan
    }
}

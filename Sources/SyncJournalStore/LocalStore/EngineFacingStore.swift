import SyncJournalProtocol
/// The half of a store only a sync engine calls: handing queued operations
/// to a transport, keeping what the server said of them, and keeping pulled
/// pages. Apps never call these (the engine keeps their order and in-flight
/// marks consistent), so none of it is public; ``LocalStore`` conforms.
package protocol EngineFacingStore: Actor {
    /// Ready, unreadable, failed, retired or closed.
    var status: StoreStatus { get }

    /// Sets the callback run (and awaited) after each local edit is durable.
    func setEditObserver(_ observer: (@Sendable () async -> Void)?)

    /// Up to `limit` operations to send next, skipping `excluding` and the
    /// rest of their records' queues.
    func operationsReadyToSend(limit: Int, excluding: Set<OperationID>) throws(StoreError) -> [OutboxOperation]

    /// Picks up to `limit` operations ready to send, journals that they may
    /// reach the server and marks them in flight, in one call and one write.
    func beginSending(limit: Int, excluding: Set<OperationID>) async throws(StoreError) -> SendingBatch

    /// Journals the outcomes of one push request together (or none of them)
    /// and ends the hand-over of `ids`, in one call and one write.
    func endSending(_ ids: [OperationID], outcomes: [(OperationID, LocalStore.DeliveryOutcome)]) async throws(StoreError) -> SendingEnd

    /// Journals that `ids` may reach the server, marks them in flight, and
    /// returns those still queued.
    func beginSending(_ ids: [OperationID]) async throws(StoreError) -> [OutboxOperation]

    /// `ids` never left the device: undoes what ``beginSending(_:)`` marked.
    func withdrawSending(_ ids: [OperationID], newlyMarked: Set<OperationID>) async throws(StoreError)

    /// The transport answered (or failed) for `ids`: they are no longer in flight.
    func finishSending(_ ids: [OperationID])

    /// Journals the outcomes of one push reply together, or none of them;
    /// returns the number of conflicts kept.
    func recordOutcomes(_ outcomes: [(OperationID, LocalStore.DeliveryOutcome)]) async throws(StoreError) -> Int

    /// Dismisses merges that lost nothing once their merged fields are no longer queued.
    func dismissSettledMerges() async throws(StoreError)

    /// Quarantined operations, in queue order.
    func quarantinedOperations() throws(StoreError) -> [OutboxEntryStatus]

    /// The pull cursors of `kinds` (`nil` for a kind never pulled).
    func cursors(for kinds: [String]) throws(StoreError) -> [String: PullCursor?]

    /// Keeps a pulled page that spans several kinds, in one journal write.
    func applyPulledPages(_ pages: [LocalStore.PulledKindPage]) async throws(StoreError)

    /// Replaces the snapshot of `kind` with a full re-pull.
    func replaceSnapshot(kind: String, rows: [ServerRow], cursor: PullCursor?) async throws(StoreError)
}

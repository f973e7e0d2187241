import SyncJournalProtocol

/// Where a hand-over's batch is kept while it is decided: the batch is picked
/// against the staged state when the store's next write is formed, and read
/// by the caller once that write is durable. Used on the store's actor only.
final class SendingBatchDraft {
    /// The batch picked, empty until decided.
    var batch = SendingBatch(operations: [], newlyMarked: [])
}

import SyncJournalCore
import SyncJournalProtocol

/// One edit of a transaction record: the operation queued and the compaction
/// it caused against the queue as the edits before it in the same record left it.
package struct TransactionEdit: Sendable, Hashable {
    /// The queued operation.
    package var operation: JournalOperation
    /// The compaction the operation caused (possibly none).
    package var compaction: [CompactionStep]

    /// Pairs an operation with the compaction it caused.
    package init(operation: JournalOperation, compaction: [CompactionStep]) {
        self.operation = operation
        self.compaction = compaction
    }

    /// The same edit as a single-edit event.
    package var event: StoreEvent { .edit(operation, compaction: compaction) }
}

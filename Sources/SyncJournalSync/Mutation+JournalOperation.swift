import SyncJournalProtocol
import SyncJournalStore

extension Mutation {
    /// The mutation that pushes `operation`.
    package init(_ operation: JournalOperation) {
        self.init(operationID: operation.id, kind: operation.entity, op: operation.kind, recordID: operation.recordID,
                  fields: operation.fields, baseUpdatedAt: operation.baseUpdatedAt, queuedAt: operation.queuedAt,
                  modelVersion: operation.modelVersion, space: operation.space)
    }
}

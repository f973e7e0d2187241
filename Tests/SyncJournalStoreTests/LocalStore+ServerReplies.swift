import SyncJournalProtocol
import SyncJournalStore

/// Server replies handed straight to a store, the way the sync engine hands
/// them over (through the engine-facing ``LocalStore/recordOutcomes(_:)``),
/// so a test can stage acknowledgements, refusals and conflicts without a
/// transport in between.
extension LocalStore {
    /// The server applied these operations; unknown ids (a late duplicate reply) are ignored.
    func deliverAcknowledgements(_ acks: [Acknowledgement]) async throws(StoreError) {
        _ = try await recordOutcomes(acks.map { ($0.operationID, .acknowledged($0.row)) })
    }

    /// The server refused `id`: a permanent refusal counts toward quarantine, a transient one only as an attempt.
    func deliverFailure(_ id: OperationID, reason: String, permanent: Bool) async throws(StoreError) {
        _ = try await recordOutcomes([(id, .failure(permanent ? .permanent : .transient, reason: reason))])
    }

    /// The server refused `id` because its copy changed (`nil`: it deleted the record).
    func deliverConflict(_ id: OperationID, server: ServerRow?) async throws(StoreError) {
        _ = try await recordOutcomes([(id, .conflicted(server: server))])
    }
}

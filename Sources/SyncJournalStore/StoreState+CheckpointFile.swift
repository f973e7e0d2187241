import SyncJournalCore

extension StoreState {
    /// Appends the checkpoint of this state to `file`, each part made,
    /// encoded and written before the next is made, so the whole checkpoint
    /// is never held in memory. Stops at the first failed append.
    package func writeCheckpoint(to file: inout CheckpointFileWriter) throws(JournalError) {
        var failure: JournalError?
        forEachCheckpointPart { part in
            let event = StoreEvent.checkpoint(part)
            do throws(JournalError) { try file.append(type: event.recordType, payload: event.encodedPayload()) } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
    }
}

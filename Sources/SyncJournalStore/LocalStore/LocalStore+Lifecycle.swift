import SyncJournalProtocol
import SyncJournalCore

extension LocalStore {
    /// Rewrites the journal as a checkpoint of the current state (see
    /// `JournalWriter.rewrite(records:)`). Queued calls are journaled first.
    public func checkpoint() async throws(StoreError) {
        try checkWritable()
        try await submit(checkpoint: true) { _ throws(StoreError) in [] }
    }

    /// Retires the store: every pending and later call returns without
    /// writing, and the journal is released so a store can be reopened on it.
    /// A late reply delivered to a retired store can never overwrite the
    /// journal a newer store uses.
    public func retire() async {
        guard currentStatus != .retired else { return }
        currentStatus = .retired
        failPending(.retired)
        // Written but not yet synced: a reopened store replays them, this one changes nothing more.
        refuseWritten(.retired)
        inFlight.removeAll()
        endObservation()
        await waitForSyncs()
        if let writer {
            self.writer = nil
            try? await writer.close()
        }
    }

    /// Journals everything queued and closes the journal.
    public func close() async throws(StoreError) {
        if case .retired = currentStatus { return }
        if case .closed = currentStatus { return }
        if case .ready = currentStatus, batcher.isBusy {
            try await submit { _ throws(StoreError) in [] }
        }
        currentStatus = .closed
        failPending(.closed)
        endObservation()
        await waitForSyncs()
        if let writer {
            self.writer = nil
            do { try await writer.close() } catch { throw .journal(error) }
        }
    }
}

import Dispatch
import SyncJournalPlatform

extension JournalWriter {
    /// Waits for pending appends, syncs anything unsynced (unless the writer
    /// failed), releases the lock and closes the file. Later calls throw
    /// ``JournalError/closed(path:)``.
    package func close() async throws(JournalError) {
        // Refuse new appends at once. Every append accepted before this point
        // has its drain queued ahead of the block below (it was scheduled under
        // the same lock), and the queue is serial, so it is written first.
        let first = state.withLock { state -> Bool in
            if state.closed { return false }
            state.closed = true
            return true
        }
        guard first else { return }
        try await BlockingIO.run(on: queue) { () throws(JournalError) in
            var syncError: JournalError?
            // A barrier may still run beside a writer that failed: the file
            // stays open until it returns.
            self.awaitBarriers()
            // After a failed sync there is nothing to flush: the failure was
            // reported to every caller it concerned.
            if self.state.withLock({ $0.failure }) == nil {
                do throws(JournalError) {
                    try self.settle()
                    try self.claimDurableRecords()
                } catch { syncError = error }
            }
            // A closed journal carries no preallocated zeros. The cut need not
            // be durable: if a crash undoes it, readers take the zeros for
            // the clean end all the same.
            // A checkpoint still being written beside the journal ends
            // here, before the lock that keeps its name ours is released.
            if let unfinished = self.state.withLock({ state in
                defer { state.backgroundCheckpoint = nil }
                return state.backgroundCheckpoint
            }) {
                unfinished.discard(io: self.io)
            }
            let (end, allocated, failed) = self.state.withLock { ($0.endOffset, $0.allocatedEnd, $0.failure != nil) }
            if !failed && syncError == nil && allocated > end { try? self.io.system.ftruncate(self.fd, end) }
            try? self.io.system.close(self.fd)
            try? self.io.system.close(self.lockFD)
            LockRegistry.release(self.lockKey)
            if let syncError { throw syncError }
        }
    }
}

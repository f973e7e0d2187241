import Dispatch
import SyncJournalPlatform

// A checkpoint that does not hold up appends: begun on the owner's thread at
// the journal's current end, written on the writer's queue while the owner
// appends to the journal, and switched to on the owner's thread once every
// record appended meanwhile is durable in the journal. Only the switch
// (copying those records, two syncs and a rename) holds up the owner.
extension JournalWriter {
    /// Starts a checkpoint of the state the owner holds now, which must be
    /// the fold of every record written so far: the new file's parts come
    /// first, and the records written from here on are copied after them
    /// by ``switchToBackgroundCheckpoint(_:appending:)``. Call on the
    /// owner's thread; one at a time, never with ``rewrite(records:)``.
    ///
    /// - Throws: ``JournalError/writerFailed(path:cause:)``,
    ///   ``JournalError/closed(path:)``.
    package func beginBackgroundCheckpoint() throws(JournalError) -> BackgroundCheckpoint {
        try state.withLock { (state) throws(JournalError) -> BackgroundCheckpoint in
            if let failure = state.failure { throw failure }
            if state.closed { throw .closed(path: path) }
            precondition(state.backgroundCheckpoint == nil, "one background checkpoint at a time")
            let header = JournalHeader(journalID: state.header.journalID, generation: JournalHeader.randomGeneration(),
                                       continuesGeneration: state.header.generation, firstSequence: state.nextSequence,
                                       createdAtMilliseconds: wallClockMilliseconds(),
                                       inFlightLimit: UInt32(inFlightLimit),
                                       minorVersion: Self.minorVersionForNewFiles(preallocationBytes: preallocationBytes))
            let checkpoint = BackgroundCheckpoint(header: header, temporary: JournalFiles(journal: path).checkpoint)
            state.backgroundCheckpoint = checkpoint
            return checkpoint
        }
    }

    /// Writes the checkpoint's parts, made by `produce`, to
    /// `<journal>.checkpoint` on the writer's queue and syncs them; appends
    /// to the journal go on meanwhile. On failure the file is removed and
    /// the checkpoint is over (the journal stays in use, unchanged).
    package func writeBackgroundCheckpoint(_ checkpoint: BackgroundCheckpoint,
                                           produce: @escaping @Sendable (inout CheckpointFileWriter) throws(JournalError) -> Void) async throws(JournalError) {
        try await BlockingIO.run(on: queue) { () throws(JournalError) in
            // The writer's close runs on this queue too: it may have ended the checkpoint first.
            let current = self.state.withLock { $0.backgroundCheckpoint === checkpoint && !$0.closed }
            guard current else { throw .closed(path: self.path) }
            let system = self.io.system
            let temporary = checkpoint.temporary
            do throws(JournalError) {
                let fd: FileDescriptor
                do throws(SystemError) { fd = try system.open(temporary, [.readWrite, .create, .truncate], 0o600) } catch {
                    throw .io(error.at(temporary))
                }
                checkpoint.fd = fd
                var file = CheckpointFileWriter(io: self.io, fd: fd, path: temporary, header: checkpoint.header)
                checkpoint.file = file
                try produce(&file)
                try file.drain()
                checkpoint.file = file
                checkpoint.partsWritten(records: file.recordCount, bytes: file.endOffset)
                // The bulk of the file is synced here, off the owner's thread:
                // the switch then syncs only the records it adds.
                do throws(SystemError) { try system.fsync(fd) } catch { throw .io(error.at(temporary)) }
            } catch {
                if self.takeBackgroundCheckpoint(checkpoint) { checkpoint.discard(io: self.io) }
                throw error
            }
        }
    }

    /// Ends the checkpoint: copies `tail` (the records written to the
    /// journal since ``beginBackgroundCheckpoint()``, in order) after the
    /// parts, closes the file with its sync-horizon record, syncs it,
    /// renames it over the journal, syncs the directory, and appends from
    /// then on to the new file. Call on the owner's thread once every
    /// record of `tail` was synced in the journal and no sync is running.
    /// Returns the records of the new file (parts and tail).
    ///
    /// A failure before the rename removes the new file and leaves the
    /// journal in use; one after it is final, as a failed `fdatasync` is.
    package func switchToBackgroundCheckpoint(_ checkpoint: BackgroundCheckpoint,
                                              appending tail: [(type: RecordType, payload: [UInt8])]) throws(JournalError) -> Int {
        guard takeBackgroundCheckpoint(checkpoint) else { throw .closed(path: path) }
        let system = io.system
        guard let newFD = checkpoint.fd, var file = checkpoint.file else {
            checkpoint.discard(io: io)
            throw .closed(path: path)
        }
        do throws(JournalError) {
            try state.withLock { (state) throws(JournalError) in
                if let failure = state.failure { throw failure }
                if state.closed { throw .closed(path: path) }
            }
            // Everything copied must be durable in the journal before the
            // rename: a crash just before it keeps the journal, just after
            // it the new file.
            if state.withLock({ $0.unsynced }) { _ = try barrier() }
            for record in tail { try file.append(type: record.type, payload: record.payload) }
            try file.finish()
            do throws(SystemError) {
                do throws(SystemError) { try system.fsync(newFD) } catch { throw error.at(checkpoint.temporary) }
                try system.rename(checkpoint.temporary, path)
            } catch {
                throw JournalError.io(error)
            }
        } catch {
            checkpoint.file = file
            checkpoint.discard(io: io)
            throw error
        }
        checkpoint.file = nil
        checkpoint.fd = nil
        // The new file has the journal's name now; from here on a failure is final.
        let end = file.endOffset
        let oldFD = state.withLock { state -> FileDescriptor in
            let old = state.fd
            state.fd = newFD
            state.header = checkpoint.header
            state.nextSequence = file.nextSequence
            state.endOffset = end
            state.durableEnd = end
            state.allocatedEnd = end
            state.unclaimedRecords = false
            state.unsynced = false
            return old
        }
        do throws(SystemError) { try io.syncDirectory(FileIO.directory(of: path)) } catch {
            try? system.close(oldFD)
            let failure = JournalError.writerFailed(path: path, cause: error)
            state.withLock { $0.failure = failure }
            throw failure
        }
        // Freeing the replaced file's blocks takes a while: the writer's
        // queue does it, not the owner's thread.
        queue.async { try? system.close(oldFD) }
        return file.recordCount
    }

    /// Ends the checkpoint without using it (the owner failed or gave up):
    /// its file is removed and the journal stays as it is.
    package func abandonBackgroundCheckpoint(_ checkpoint: BackgroundCheckpoint) {
        guard takeBackgroundCheckpoint(checkpoint) else { return }
        checkpoint.discard(io: io)
    }

    /// Takes `checkpoint` from the writer's state; `false` when someone
    /// else (the writer's close, a failure) already ended it.
    private func takeBackgroundCheckpoint(_ checkpoint: BackgroundCheckpoint) -> Bool {
        state.withLock { state in
            guard state.backgroundCheckpoint === checkpoint else { return false }
            state.backgroundCheckpoint = nil
            return true
        }
    }
}

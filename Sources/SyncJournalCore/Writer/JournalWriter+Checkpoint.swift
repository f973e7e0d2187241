import Dispatch
import SyncJournalPlatform

extension JournalWriter {
    /// Replaces the journal with a new file of the next generation holding
    /// `records` (a checkpoint): syncs the current file, writes the new one
    /// under `<path>.checkpoint`, `fsync`s it, renames it into place and
    /// `fsync`s the directory; only the rename removes the old file. A crash at
    /// any step leaves either the old journal or the new one, each complete.
    ///
    /// The new header keeps the journal id, names the generation it
    /// continues, and starts at the next sequence number, so numbering stays
    /// gapless across the rewrite. Returns the first record's sequence number.
    ///
    /// A failure before the rename leaves the old journal in use (the
    /// temporary file is removed); a failure after it is final, like a failed
    /// `fdatasync`: the writer cannot know which file a crash would leave.
    @discardableResult
    package func rewrite(records: [(type: RecordType, payload: [UInt8])]) async throws(JournalError) -> UInt64 {
        for record in records where record.payload.count > JournalFormat.maximumPayloadLength {
            throw .recordTooLarge(bytes: record.payload.count, maximum: JournalFormat.maximumPayloadLength)
        }
        return try await rewrite { (file) throws(JournalError) in
            for record in records { try file.append(type: record.type, payload: record.payload) }
        }.firstSequence
    }

    /// As ``rewrite(records:)``, with the records made by `produce` while
    /// the new file is written (on the writer's queue): they go to the file in
    /// chunks as they come, so the checkpoint is never held whole in memory.
    /// A failure of `produce` (a record too large) leaves the old journal in
    /// use. Returns the first record's sequence number and the records written.
    @discardableResult
    package func rewrite(streaming produce: @escaping @Sendable (inout CheckpointFileWriter) throws(JournalError) -> Void) async throws(JournalError) -> (firstSequence: UInt64, records: Int) {
        try await BlockingIO.run(on: queue) { () throws(JournalError) -> (firstSequence: UInt64, records: Int) in
            try self.state.withLock { (state) throws(JournalError) in
                if let failure = state.failure { throw failure }
                if state.closed { throw .closed(path: self.path) }
            }
            try self.settle()
            let (old, firstSequence) = self.state.withLock { ($0.header, $0.nextSequence) }
            // A checkpoint is always written in the current format: this is
            // how a 1.x journal moves to format 2.
            let header = JournalHeader(journalID: old.journalID, generation: JournalHeader.randomGeneration(),
                                       continuesGeneration: old.generation, firstSequence: firstSequence,
                                       createdAtMilliseconds: wallClockMilliseconds(),
                                       inFlightLimit: UInt32(self.inFlightLimit),
                                       minorVersion: Self.minorVersionForNewFiles(preallocationBytes: self.preallocationBytes))
            let system = self.io.system
            let (newFD, file) = try Self.writeReplacement(of: self.path, header: header, io: self.io, produce)
            // The new file has the journal's name now; from here on a failure is final.
            let oldFD = self.fd
            let end = file.endOffset
            self.state.withLock {
                $0.fd = newFD
                $0.header = header
                $0.nextSequence = file.nextSequence
                $0.endOffset = end
                $0.durableEnd = end
                $0.allocatedEnd = end
                // The new file's closing record claims every record in it.
                $0.unclaimedRecords = false
                $0.unsynced = false
            }
            do throws(SystemError) { try self.io.syncDirectory(FileIO.directory(of: self.path)) } catch {
                try? system.close(oldFD)
                let failure = JournalError.writerFailed(path: self.path, cause: error)
                self.state.withLock { $0.failure = failure }
                throw failure
            }
            // Closing the replaced file frees all of it (its last name is
            // gone), which takes as long as a good part of the checkpoint: it
            // is queued behind the checkpoint on the writer's queue, ahead of
            // anything the writer does next, instead of making the caller wait.
            self.queue.async { try? system.close(oldFD) }
            return (firstSequence, file.recordCount)
        }
    }

    /// Writes the file that replaces the journal at `path`: `produce` fills
    /// `<path>.checkpoint`, which is finished, synced and renamed over the
    /// journal. On any failure the temporary file is removed and the journal
    /// is as it was. Returns the new file's descriptor and its writer.
    static func writeReplacement(of path: String, header: JournalHeader, io: FileIO,
                                 _ produce: (inout CheckpointFileWriter) throws(JournalError) -> Void) throws(JournalError) -> (FileDescriptor, CheckpointFileWriter) {
        let system = io.system
        let temporary = JournalFiles(journal: path).checkpoint
        let newFD: FileDescriptor
        do throws(SystemError) { newFD = try system.open(temporary, [.readWrite, .create, .truncate], 0o600) } catch { throw .io(error.at(temporary)) }
        var file = CheckpointFileWriter(io: io, fd: newFD, path: temporary, header: header)
        do throws(JournalError) {
            try produce(&file)
            try file.finish()
            do throws(SystemError) {
                do throws(SystemError) { try system.fsync(newFD) } catch { throw error.at(temporary) }
                try system.rename(temporary, path)
            } catch {
                throw JournalError.io(error)
            }
        } catch {
            file.abandon()
            try? system.close(newFD)
            try? system.unlink(temporary)
            throw error
        }
        return (newFD, file)
    }
}

import Dispatch

extension JournalWriter {
    /// Moves a 1.x journal opened with ``Options/defersFormatMove`` to the
    /// current format (``moveToCurrentFormat(path:fd:header:understands:io:)``);
    /// nothing happens for a journal already in it. A failure before the
    /// rename leaves the 1.x journal in use; one after it is final, as for a
    /// checkpoint.
    package func moveToCurrentFormat() async throws(JournalError) {
        try await BlockingIO.run(on: queue) { () throws(JournalError) in
            let old = try self.state.withLock { (state) throws(JournalError) -> JournalHeader in
                if let failure = state.failure { throw failure }
                if state.closed { throw .closed(path: self.path) }
                return state.header
            }
            guard !old.hasSyncHorizons else { return }
            try self.settle()
            let oldFD = self.fd
            let moved = try JournalWriter.moveToCurrentFormat(path: self.path, fd: oldFD, header: old, understands: nil, io: self.io)
            self.state.withLock {
                $0.fd = moved.fd
                $0.header = moved.header
                $0.endOffset = moved.endOffset
                $0.durableEnd = moved.endOffset
                $0.allocatedEnd = moved.endOffset
                $0.nextSequence = moved.nextSequence
                // The new file's closing record claims every record in it.
                $0.unclaimedRecords = false
                $0.unsynced = false
            }
            try? self.io.system.close(oldFD)
            do throws(SystemError) { try self.io.syncDirectory(FileIO.directory(of: self.path)) } catch {
                let failure = JournalError.writerFailed(path: self.path, cause: error)
                self.state.withLock { $0.failure = failure }
                throw failure
            }
        }
    }

    /// Rewrites the 1.x journal open at `fd` in the current format, the way
    /// a checkpoint file is written: into `<path>.checkpoint`, `fsync`,
    /// rename over the journal; the caller then `fsync`s the directory. A
    /// crash before the rename leaves the 1.x journal as it was (a leftover
    /// temporary file is truncated by the next attempt); after it, the
    /// complete new file.
    ///
    /// Unlike a checkpoint it keeps the journal id, the generation, the
    /// continued generation, the first sequence, the creation time and every
    /// record (type, sequence number, payload): only the framing changes, so
    /// what a reader rebuilds from the file is the same. Like every
    /// replacement file it ends with a closing sync-horizon record, which
    /// takes the next sequence number.
    static func moveToCurrentFormat(path: String, fd: FileDescriptor, header old: JournalHeader,
                                    understands: (@Sendable (RecordType) -> Bool)?, io: FileIO) throws(JournalError) -> (fd: FileDescriptor, header: JournalHeader, endOffset: Int64, nextSequence: UInt64, recordCount: Int) {
        let header = JournalHeader(journalID: old.journalID, generation: old.generation, continuesGeneration: old.continuesGeneration,
                                   firstSequence: old.firstSequence, createdAtMilliseconds: old.createdAtMilliseconds)
        let (newFD, file) = try writeReplacement(of: path, header: header, io: io) { (file) throws(JournalError) in
            let report: JournalScanReport
            do {
                var scanner = try JournalScanner(io: io, fd: fd, path: path, understands: understands)
                report = try scanner.run { record in try file.append(type: record.type, payload: record.payload) }
            } catch let error as JournalError {
                throw error
            } catch let error as SystemError {
                throw JournalError.io(error.at(path))
            } catch {
                throw JournalError.io(SystemError(call: .pread, code: .ioError, path: path))
            }
            // The open found the file clean (or cut it clean) under the lock
            // just before; anything else means it changed under the writer.
            switch report.status {
            case .clean: break
            case .corrupt(let offset, let damage), .tornTail(let offset, let damage):
                throw JournalError.corrupt(path: path, offset: offset, damage: damage)
            case .unsupported(let offset, let reason):
                throw JournalError.unsupported(path: path, offset: offset, reason: reason)
            }
        }
        return (newFD, header, file.endOffset, file.nextSequence, file.recordCount)
    }
}

import SyncJournalPlatform

extension JournalWriter {
    /// Writes `records` at the end of the journal on the calling thread and
    /// returns the end of the file after them; they are not yet durable
    /// (``syncOnCallingThread()`` makes them so). For an owner that runs on
    /// a thread of its own, which may block: a store on its own executor.
    /// Never called together with ``append(records:)`` on one writer, nor
    /// with itself.
    ///
    /// Returns `nil`, writing nothing, when the records would take the bytes
    /// written past the durable end beyond the in-flight limit while earlier
    /// writes are still unsynced: the caller waits for their sync and tries again.
    ///
    /// - Throws: ``JournalError/io(_:)`` when the write fails (nothing was
    ///   appended); ``JournalError/writerFailed(path:cause:)`` when a sync
    ///   failed; ``JournalError/recordTooLarge(bytes:maximum:)``;
    ///   ``JournalError/closed(path:)``.
    package func writeOnCallingThread(records: [(type: RecordType, payload: [UInt8])]) throws(JournalError) -> Int64? {
        var byteCount = 0
        for record in records {
            if record.payload.count > JournalFormat.maximumPayloadLength {
                throw .recordTooLarge(bytes: record.payload.count, maximum: JournalFormat.maximumPayloadLength)
            }
            byteCount += JournalFormat.recordHeaderLength + record.payload.count
        }
        if records.count > 1, byteCount > inFlightLimit {
            throw .recordTooLarge(bytes: byteCount, maximum: inFlightLimit)
        }
        let (firstSequence, offset, header, horizon) = try state.withLock { (state) throws(JournalError) in
            if let failure = state.failure { throw failure }
            if state.closed { throw .closed(path: path) }
            return (state.nextSequence, state.endOffset, state.header, state.durableEnd)
        }
        // Format 2 promises that nothing lies more than the in-flight limit
        // past the durable end; a write that would break it waits for a sync.
        if offset + Int64(byteCount) - horizon > Int64(inFlightLimit) && offset > horizon { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount)
        var sequence = firstSequence
        for record in records {
            RecordFrame.encode(type: record.type, header: header, sequence: sequence, horizon: horizon,
                               payload: record.payload, into: &bytes)
            sequence += 1
        }
        do {
            try preallocate(through: offset + Int64(bytes.count))
            try io.writeAll(fd, bytes, at: offset, path: path)
        } catch {
            throw cutBackFailedWrite(at: offset, length: bytes.count, error)
        }
        let end = offset + Int64(bytes.count)
        state.withLock {
            $0.unsynced = true
            $0.unclaimedRecords = true
            $0.nextSequence = sequence
            $0.endOffset = end
        }
        return end
    }

    /// Runs `fdatasync` on the calling thread and returns how far the file
    /// is now durable: every write that returned before this call is
    /// covered. It may run on another thread while
    /// ``writeOnCallingThread(records:)`` writes the next batch.
    ///
    /// - Throws: ``JournalError/writerFailed(path:cause:)``, for good: a
    ///   failed sync is never retried.
    package func syncOnCallingThread() throws(JournalError) -> Int64 {
        let end = try state.withLock { (state) throws(JournalError) -> Int64 in
            if let failure = state.failure { throw failure }
            return state.endOffset
        }
        try syncOrFail()
        return end
    }

    /// After a failed write of `length` bytes at `offset`: cuts any partial
    /// bytes so the next record starts at the same boundary, and makes the
    /// cut durable before anything is written there again, so a power cut
    /// can never mix the failed write's records with the next ones. If either
    /// fails the file's end is unknown, so the writer stops (a failed sync is
    /// never retried); when the cut itself failed it still overwrites the
    /// partial bytes with zeros, so that a reopening finds the clean end
    /// instead of a record's first bytes, which read as damage (section 3.1
    /// of `journals/FORMAT.md`). Returns the error to report.
    func cutBackFailedWrite(at offset: Int64, length: Int, _ error: SystemError) -> JournalError {
        do throws(SystemError) {
            do { try io.system.ftruncate(fd, offset) } catch {
                try? io.writeAll(fd, [UInt8](repeating: 0, count: length), at: offset, path: path)
                try? io.system.fdatasync(fd)
                throw error
            }
            state.withLock { $0.allocatedEnd = offset }
            try io.system.fdatasync(fd)
            return .io(error)
        } catch {
            let stop = JournalError.writerFailed(path: path, cause: error.at(path))
            state.withLock { $0.failure = stop }
            return stop
        }
    }
}

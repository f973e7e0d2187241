import Dispatch
import SyncJournalPlatform

extension JournalWriter {
    /// Bulk mode: encodes the record into the buffer and returns at once; the
    /// writer's queue writes the buffer once it passes ``bulkFlushThreshold``.
    func appendBuffered(type: RecordType, payload: [UInt8]) throws(JournalError) -> UInt64 {
        try state.withLock { (state) throws(JournalError) -> UInt64 in
            if let failure = state.failure { throw failure }
            if state.closed { throw .closed(path: path) }
            let sequence = state.nextSequence
            RecordFrame.encode(type: type, header: state.header, sequence: sequence, horizon: state.durableEnd,
                               payload: payload, into: &state.buffer)
            state.nextSequence += 1
            if state.buffer.count >= Self.bulkFlushThreshold && !state.flushScheduled {
                state.flushScheduled = true
                queue.async { try? self.flushBuffer() }
            }
            return sequence
        }
    }

    /// Bytes buffered in bulk mode before the writer's queue writes them.
    static let bulkFlushThreshold = 1 << 20

    /// Writes the bulk buffer (on the writer's queue). A failed write here is
    /// final: the buffered records already have sequence numbers, so the
    /// writer cannot take them back.
    func flushBuffer() throws(JournalError) {
        let (bytes, offset, failure) = state.withLock { state -> ([UInt8], Int64, JournalError?) in
            state.flushScheduled = false
            let bytes = state.buffer
            state.buffer = []
            return (bytes, state.endOffset, state.failure)
        }
        if let failure { throw failure }
        guard !bytes.isEmpty else { return }
        var written = 0
        let recordHeaderLength = state.withLock { $0.header.recordHeaderLength }
        for chunk in Self.frameAlignedChunks(of: bytes, limit: inFlightLimit, recordHeaderLength: recordHeaderLength) {
            // Never more than the in-flight limit past the durable end:
            // recovery relies on it to bound a torn tail. Chunks end on record
            // boundaries, so the durable end a sync sets is always one. The
            // records buffered already carry an older horizon, which only
            // makes their claim weaker.
            let at = offset + Int64(written)
            let (durableEnd, unsynced) = state.withLock { ($0.durableEnd, $0.unsynced) }
            if unsynced, at + Int64(chunk.count) - durableEnd > Int64(inFlightLimit) {
                try syncOrFail()
            }
            do {
                try preallocate(through: at + Int64(chunk.count))
                try io.writeAll(fd, Array(bytes[chunk]), at: at, path: path)
            } catch {
                // The cut is synced, so the file's end never moves back to a
                // size that looks closed while earlier chunks are unsynced.
                _ = cutBackFailedWrite(at: at, length: chunk.count, error)
                let failure = JournalError.writerFailed(path: path, cause: error)
                state.withLock { $0.failure = failure }
                throw failure
            }
            written += chunk.count
            state.withLock {
                $0.endOffset = at + Int64(chunk.count)
                $0.unsynced = true
                $0.unclaimedRecords = true
            }
        }
    }

    /// Splits encoded frames into runs of whole frames, each at most `limit`
    /// bytes unless one frame alone is longer.
    static func frameAlignedChunks(of bytes: [UInt8], limit: Int, recordHeaderLength: Int) -> [Range<Int>] {
        if bytes.count <= limit { return [0..<bytes.count] }
        // The payload length sits at offset 8 of a format-2 frame, 4 of a 1.x one.
        let lengthField = recordHeaderLength == JournalFormat.recordHeaderLength ? 8 : 4
        var chunks: [Range<Int>] = []
        var start = 0
        var at = 0
        while at < bytes.count {
            var length = 0
            for i in 0..<4 { length |= Int(bytes[at + lengthField + i]) << (8 * i) }
            let next = at + recordHeaderLength + length
            if next - start > limit && at > start {
                chunks.append(start..<at)
                start = at
            }
            at = next
        }
        chunks.append(start..<bytes.count)
        return chunks
    }

    /// Format 2: appends and syncs an empty ``RecordType/syncHorizon``
    /// record whose horizon covers every record written so far, when some
    /// are not covered yet (on the writer's queue, after the last sync).
    /// Every writer does it when it closes, whatever its mode.
    ///
    /// Without it the last batch (or, in bulk mode, whose records carry the
    /// horizon of the last sync before they were buffered, a whole import)
    /// would end unclaimed, and damage to it would read like an append that
    /// never reached the disk. When the record would end the file on a
    /// multiple of the sector size a second one follows it: a closed
    /// journal then never ends where a preallocation step can, which is how
    /// a reader knows it was closed (`journals/FORMAT.md`, section 3.2).
    ///
    /// The records are durable already; this only lets a reader prove it.
    /// So a write that fails (a full disk) is cut back and ignored. A failed
    /// sync still fails the close: it is never retried, and the record it
    /// covered may be torn, which the next open cuts.
    func claimDurableRecords() throws(JournalError) {
        let (header, unclaimed, offset, sequence, horizon) = state.withLock {
            ($0.header, $0.unclaimedRecords, $0.endOffset, $0.nextSequence, $0.durableEnd)
        }
        guard header.hasSyncHorizons, unclaimed, horizon == offset else { return }
        var bytes: [UInt8] = []
        var next = sequence
        repeat {
            RecordFrame.encode(type: .syncHorizon, header: header, sequence: next, horizon: horizon, payload: [], into: &bytes)
            next += 1
        } while (offset + Int64(bytes.count)) % Int64(JournalFormat.sectorSize) == 0
        do {
            try preallocate(through: offset + Int64(bytes.count))
            try io.writeAll(fd, bytes, at: offset, path: path)
        } catch {
            if (try? io.system.ftruncate(fd, offset)) != nil { state.withLock { $0.allocatedEnd = offset } }
            return
        }
        state.withLock {
            $0.endOffset = offset + Int64(bytes.count)
            $0.nextSequence = next
            $0.unsynced = true
            $0.unclaimedRecords = false
        }
        try syncOrFail()
    }
}

import Dispatch
import SyncJournalPlatform

// The journal's one write path. Every byte a writer appends goes through
// `writeAtEnd`, and every `fdatasync` through `barrier`; who may learn that
// their records are durable is decided by a `CommitQueue`. Two kinds of
// owner drive it:
// - an owner with a thread of its own (a store) calls `write(records:)` and
//   `barrier()` itself, with a commit queue of its own;
// - everyone else calls `append`, and the writer drives the same calls on
//   its queue (writes) and its barrier queue (syncs).
//
// What the path keeps true, whoever drives it:
// 1. Bytes are written only at the end of the last record, by one thread at
//    a time: the owner's, or the writer's queue, never both for one writer.
// 2. Nothing is ever written more than the header's in-flight limit past
//    the durable end (format 2 bounds a torn tail by it): a write that
//    would go further waits for a barrier.
// 3. Each record carries, as its sync horizon, the durable end known when
//    it was encoded; a barrier moves the durable end only forward, to the
//    end of the file it read before syncing.
// 4. A failed write is cut back to the record boundary, durably, before
//    anything else is written; if that cut cannot be made, or a barrier
//    fails, the writer stops for good (a failed `fdatasync` is never retried).
// 5. A caller learns that its records are durable only from a barrier that
//    started after they were written (the commit queue's rules), in the
//    order they were written.
// 6. The file's size changes only by preallocation steps or a synced cut,
//    so a size a power cut leaves never looks like a closed journal's end.
//
// Batches and barriers overlap: while one batch is synced the next is
// written, and one barrier then covers all that was written. A power cut
// may keep a later batch without an earlier one; format 2's recovery rule
// allows for that (the later batch carries the older horizon).
extension JournalWriter {
    // MARK: - Writing and syncing (the primitives every owner uses)

    /// Writes `records` at the end of the journal on the calling thread and
    /// returns the end of the file after them; they are not yet durable
    /// (``barrier()`` makes them so). For an owner that runs on a thread of
    /// its own, which may block; never called together with ``append(records:)``
    /// on one writer, nor with itself.
    ///
    /// Returns `nil`, writing nothing, when the records would take the bytes
    /// past the durable end beyond the in-flight limit while earlier writes
    /// are unsynced: the caller waits for a barrier and tries again.
    ///
    /// - Throws: ``JournalError/io(_:)`` when the write fails (nothing was
    ///   appended); ``JournalError/writerFailed(path:cause:)`` when a sync
    ///   failed; ``JournalError/recordTooLarge(bytes:maximum:)``;
    ///   ``JournalError/closed(path:)``.
    package func write(records: [(type: RecordType, payload: [UInt8])]) throws(JournalError) -> Int64? {
        let byteCount = try Self.checkedLength(of: records, inFlightLimit: inFlightLimit)
        let (firstSequence, offset, header, horizon) = try state.withLock { (state) throws(JournalError) in
            if let failure = state.failure { throw failure }
            if state.closed { throw .closed(path: path) }
            return (state.nextSequence, state.endOffset, state.header, state.durableEnd)
        }
        if offset > horizon && offset + Int64(byteCount) - horizon > Int64(inFlightLimit) { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount)
        var sequence = firstSequence
        for record in records {
            RecordFrame.encode(type: record.type, header: header, sequence: sequence, horizon: horizon,
                               payload: record.payload, into: &bytes)
            sequence += 1
        }
        return try writeAtEnd(bytes, at: offset, nextSequence: sequence)
    }

    /// Runs `fdatasync` on the calling thread and returns how far the file
    /// is now durable: every write that returned before this call is
    /// covered. It may run on another thread while ``write(records:)``
    /// writes the next batch.
    ///
    /// - Throws: ``JournalError/writerFailed(path:cause:)``, for good: a
    ///   failed sync is never retried.
    package func barrier() throws(JournalError) -> Int64 {
        let end = try state.withLock { (state) throws(JournalError) -> Int64 in
            if let failure = state.failure { throw failure }
            return state.endOffset
        }
        do {
            try io.system.fdatasync(fd)
        } catch {
            // Never retried: the kernel may have dropped the dirty pages and a
            // second fdatasync could report success for data that is gone.
            let failure = JournalError.writerFailed(path: path, cause: error.at(path))
            state.withLock {
                $0.syncCount += 1
                $0.failure = failure
            }
            throw failure
        }
        state.withLock {
            $0.syncCount += 1
            $0.durableEnd = max($0.durableEnd, end)
            if $0.endOffset == end { $0.unsynced = false }
        }
        return end
    }

    /// The bytes `records` take as frames, checked against the format's limits.
    static func checkedLength(of records: [(type: RecordType, payload: [UInt8])], inFlightLimit: Int) throws(JournalError) -> Int {
        var byteCount = 0
        for record in records {
            if record.payload.count > JournalFormat.maximumPayloadLength {
                throw .recordTooLarge(bytes: record.payload.count, maximum: JournalFormat.maximumPayloadLength)
            }
            byteCount += JournalFormat.recordHeaderLength + record.payload.count
        }
        // One batch is written with one write: it must fit in flight.
        if records.count > 1, byteCount > inFlightLimit {
            throw .recordTooLarge(bytes: byteCount, maximum: inFlightLimit)
        }
        return byteCount
    }

    /// Writes encoded frames at `offset`, the end of the last record,
    /// extending the preallocated space first; returns the new end. The one
    /// place bytes are appended. A failure cuts the partial bytes back
    /// (``cutBackFailedWrite(at:length:_:)``) and throws.
    /// `nextSequence` is the sequence number after the last frame, or `nil`
    /// when the frames took theirs when they were gathered (a bulk window).
    @discardableResult
    func writeAtEnd(_ bytes: [UInt8], at offset: Int64, nextSequence: UInt64?) throws(JournalError) -> Int64 {
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
            if let nextSequence { $0.nextSequence = nextSequence }
            $0.endOffset = end
        }
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

    // MARK: - Appending through the writer's queue

    /// Appends one record and returns its sequence number once it is durable
    /// (written, in ``Mode/bulk``).
    ///
    /// - Throws: ``JournalError/io(_:)`` when the write fails (nothing was
    ///   appended); ``JournalError/writerFailed(path:cause:)`` when this or an
    ///   earlier sync failed; ``JournalError/recordTooLarge(bytes:maximum:)``;
    ///   ``JournalError/closed(path:)``.
    @discardableResult
    package func append(type: RecordType, payload: [UInt8]) async throws(JournalError) -> UInt64 {
        try await append(records: [(type, payload)])
    }

    /// Appends several records with one write and (outside bulk mode) one
    /// `fdatasync`, and returns the first one's sequence number; the others
    /// follow it without a gap. All of them are appended or none is: a failed
    /// write is cut back to the boundary before the first. (A crash in the
    /// middle of the write can keep a prefix of them, which recovery treats
    /// like any torn tail.)
    @discardableResult
    package func append(records: [(type: RecordType, payload: [UInt8])]) async throws(JournalError) -> UInt64 {
        _ = try Self.checkedLength(of: records, inFlightLimit: inFlightLimit)
        if mode == .bulk {
            var first: UInt64?
            for record in records {
                let sequence = try appendToWindow(type: record.type, payload: record.payload)
                if first == nil { first = sequence }
            }
            return first ?? nextSequence
        }
        guard !records.isEmpty else { return nextSequence }
        let result: Result<UInt64, JournalError> = await withCheckedContinuation { continuation in
            let refusal: JournalError? = state.withLock { state in
                if let failure = state.failure { return failure }
                if state.closed { return .closed(path: path) }
                state.pending.append(Pending(records: records, continuation: continuation))
                if !state.drainScheduled {
                    state.drainScheduled = true
                    queue.async { self.drain() }
                }
                return nil
            }
            if let refusal { continuation.resume(returning: .failure(refusal)) }
        }
        return try result.get()
    }

    /// Writes waiting appends on the writer's queue: one request per batch,
    /// synced before the next is written (``Mode/durable``), or as many as
    /// fit in flight together, written while the last batch is synced on
    /// the barrier queue (``Mode/groupCommit``).
    func drain() {
        while let batch = takeBatch() {
            let records = batch.count == 1 ? batch[0].records : batch.flatMap(\.records)
            var end: Int64?
            do {
                end = try write(records: records)
                if end == nil {
                    try makeRoom()
                    end = try write(records: records)
                }
            } catch {
                for request in batch { request.continuation.resume(returning: .failure(error)) }
                continue
            }
            guard let end else {
                // Only a batch larger than the in-flight limit by itself
                // finds no room once nothing is unsynced.
                let bytes = records.reduce(0) { $0 + JournalFormat.recordHeaderLength + $1.payload.count }
                for request in batch {
                    request.continuation.resume(returning: .failure(.recordTooLarge(bytes: bytes, maximum: inFlightLimit)))
                }
                continue
            }
            var sequence = state.withLock { $0.nextSequence } - UInt64(records.count)
            var acknowledgements: [Acknowledgement] = []
            for request in batch {
                acknowledgements.append(Acknowledgement(continuation: request.continuation, sequence: sequence))
                sequence += UInt64(request.records.count)
            }
            let (start, refusal) = state.withLock { state -> (Bool, JournalError?) in
                // A barrier on the barrier queue may have failed since this
                // batch was written: then none will cover it, and its
                // appends are refused here rather than left waiting for ever.
                guard state.commits.wrote(end: end, waiters: acknowledgements) else {
                    return (false, state.failure ?? .closed(path: path))
                }
                return (state.commits.barrierStarting(), nil)
            }
            if let refusal {
                for acknowledgement in acknowledgements { acknowledgement.continuation.resume(returning: .failure(refusal)) }
                continue
            }
            guard start else { continue }
            if mode == .durable {
                runBarriers()
            } else {
                barrierQueue.async { self.runBarriers() }
            }
        }
    }

    /// Takes the next batch of waiting appends, or ends the drain.
    private func takeBatch() -> [Pending]? {
        state.withLock { state in
            if state.pending.isEmpty {
                state.drainScheduled = false
                return nil
            }
            guard mode == .groupCommit else { return [state.pending.removeFirst()] }
            // As many waiting requests as fit in flight together.
            var bytes = 0
            var count = 0
            for request in state.pending {
                let size = request.byteCount
                if count > 0 && bytes + size > inFlightLimit { break }
                bytes += size
                count += 1
            }
            if count == state.pending.count {
                var taken: [Pending] = []
                swap(&taken, &state.pending)
                return taken
            }
            let taken = Array(state.pending.prefix(count))
            state.pending.removeFirst(count)
            return taken
        }
    }

    /// Runs barriers while the commit queue asks for them (the caller
    /// started the first, ``CommitQueue/barrierStarting()``), and answers the
    /// appends each one covers. On the barrier queue, or inline on the
    /// writer's queue in durable mode.
    func runBarriers() {
        while true {
            let outcome: Result<Int64, JournalError>
            do { outcome = .success(try barrier()) } catch { outcome = .failure(error) }
            let (released, another, refused) = state.withLock { state -> ([Acknowledgement], Bool, [Acknowledgement]) in
                switch outcome {
                case .success(let end):
                    let ended = state.commits.barrierEnded(durableThrough: end)
                    return (ended.released, ended.stillWaiting && state.commits.barrierStarting(), [])
                case .failure:
                    return ([], false, state.commits.barrierFailed())
                }
            }
            for acknowledgement in released { acknowledgement.continuation.resume(returning: .success(acknowledgement.sequence)) }
            if case .failure(let error) = outcome {
                for acknowledgement in refused { acknowledgement.continuation.resume(returning: .failure(error)) }
            }
            if !another { return }
        }
    }

    /// A write found too much in flight: waits for the running barrier,
    /// then, if bytes are still unsynced, runs one here and answers the
    /// appends it covers. After it nothing is unsynced, so the write fits
    /// (``write(records:)`` checks a lone batch against the limit itself).
    func makeRoom() throws(JournalError) {
        awaitBarriers()
        guard state.withLock({ $0.unsynced }) else { return }
        let released: [Acknowledgement]
        do {
            let end = try barrier()
            released = state.withLock { $0.commits.released(durableThrough: end) }
        } catch {
            for acknowledgement in state.withLock({ $0.commits.barrierFailed() }) {
                acknowledgement.continuation.resume(returning: .failure(error))
            }
            throw error
        }
        for acknowledgement in released { acknowledgement.continuation.resume(returning: .success(acknowledgement.sequence)) }
    }

    /// Waits, on the writer's queue, until no barrier runs on the barrier
    /// queue (the barriers it runs start nothing on the writer's queue, so
    /// this cannot deadlock).
    func awaitBarriers() {
        barrierQueue.sync {}
    }

    /// On the writer's queue: writes every accepted append and the bulk
    /// window, and makes all of it durable, so a rewrite, a close or
    /// ``sync()`` finds the file quiet.
    func settle() throws(JournalError) {
        drain()
        awaitBarriers()
        try flushWindow()
        let unsynced = try state.withLock { (state) throws(JournalError) -> Bool in
            if let failure = state.failure { throw failure }
            return state.unsynced
        }
        if unsynced { _ = try barrier() }
    }

    /// Makes every record written so far durable. In durable and group-commit
    /// modes appends already are; this matters for ``Mode/bulk``.
    package func sync() async throws(JournalError) {
        try await BlockingIO.run(on: queue) { () throws(JournalError) in
            try self.state.withLock { (state) throws(JournalError) in
                if let failure = state.failure { throw failure }
                if state.closed { throw .closed(path: self.path) }
            }
            try self.settle()
        }
    }

    // MARK: - Bulk windows

    /// Bulk mode: encodes the record into the window and returns at once; the
    /// writer's queue writes the window once it passes ``bulkWindowBytes``.
    func appendToWindow(type: RecordType, payload: [UInt8]) throws(JournalError) -> UInt64 {
        try state.withLock { (state) throws(JournalError) -> UInt64 in
            if let failure = state.failure { throw failure }
            if state.closed { throw .closed(path: path) }
            let sequence = state.nextSequence
            RecordFrame.encode(type: type, header: state.header, sequence: sequence, horizon: state.durableEnd,
                               payload: payload, into: &state.window)
            state.nextSequence += 1
            if state.window.count >= Self.bulkWindowBytes && !state.flushScheduled {
                state.flushScheduled = true
                queue.async { try? self.flushWindow() }
            }
            return sequence
        }
    }

    /// Bytes gathered in bulk mode before the writer's queue writes them.
    static let bulkWindowBytes = 1 << 20

    /// Writes the bulk window (on the writer's queue), in runs of whole
    /// frames that keep within the in-flight limit, with a barrier between
    /// runs when one is needed. A failed write here is final: the records
    /// already have sequence numbers, so the writer cannot take them back.
    func flushWindow() throws(JournalError) {
        let (bytes, offset, failure) = state.withLock { state -> ([UInt8], Int64, JournalError?) in
            state.flushScheduled = false
            let bytes = state.window
            state.window = []
            return (bytes, state.endOffset, state.failure)
        }
        if let failure { throw failure }
        guard !bytes.isEmpty else { return }
        var written = 0
        let recordHeaderLength = state.withLock { $0.header.recordHeaderLength }
        for chunk in Self.frameAlignedChunks(of: bytes, limit: inFlightLimit, recordHeaderLength: recordHeaderLength) {
            // Runs end on record boundaries, so the durable end a barrier
            // sets is always one. The records already carry an older
            // horizon, which only makes their claim weaker.
            let at = offset + Int64(written)
            let (durableEnd, unsynced) = state.withLock { ($0.durableEnd, $0.unsynced) }
            if unsynced, at + Int64(chunk.count) - durableEnd > Int64(inFlightLimit) { _ = try barrier() }
            do {
                // The sequence numbers were taken when the records were
                // gathered: the state's next sequence stays as it is.
                try writeAtEnd(Array(bytes[chunk]), at: at, nextSequence: nil)
            } catch {
                guard case .io(let cause) = error else { throw error }
                let failure = JournalError.writerFailed(path: path, cause: cause)
                state.withLock { $0.failure = failure }
                throw failure
            }
            written += chunk.count
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

    // MARK: - Closing claim

    /// Format 2: appends and syncs an empty ``RecordType/syncHorizon``
    /// record whose horizon covers every record written so far, when some
    /// are not covered yet (on the writer's queue, after the last sync).
    /// Every writer does it when it closes, whatever its mode.
    ///
    /// Without it the last batch (or, in bulk mode, whose records carry the
    /// horizon of the last sync before they were gathered, a whole import)
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
            try writeAtEnd(bytes, at: offset, nextSequence: next)
        } catch {
            // The records stay durable but unclaimed, as after a crash.
            return
        }
        state.withLock { $0.unclaimedRecords = false }
        _ = try barrier()
    }
}

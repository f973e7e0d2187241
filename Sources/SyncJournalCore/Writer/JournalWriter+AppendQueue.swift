import Dispatch
import SyncJournalPlatform

extension JournalWriter {
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
        for record in records where record.payload.count > JournalFormat.maximumPayloadLength {
            throw .recordTooLarge(bytes: record.payload.count, maximum: JournalFormat.maximumPayloadLength)
        }
        // One request is written with one write: it must fit in flight.
        let requestBytes = records.reduce(0) { $0 + JournalFormat.recordHeaderLength + $1.payload.count }
        if records.count > 1, requestBytes > inFlightLimit {
            throw .recordTooLarge(bytes: requestBytes, maximum: inFlightLimit)
        }
        if mode == .bulk {
            var first: UInt64?
            for record in records {
                let sequence = try appendBuffered(type: record.type, payload: record.payload)
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

    /// Writes pending appends, one at a time or all together in group-commit
    /// mode, on the writer's queue.
    func drain() {
        while true {
            let batch: [Pending]
            let firstSequence: UInt64
            let offset: Int64
            let taken: [Pending]? = state.withLock { state in
                if state.pending.isEmpty {
                    state.drainScheduled = false
                    return nil
                }
                if mode == .groupCommit {
                    // As many waiting requests as fit in flight together.
                    var bytes = 0
                    var count = 0
                    for request in state.pending {
                        let size = request.byteCount
                        if count > 0 && bytes + size > Int(inFlightLimit) { break }
                        bytes += size
                        count += 1
                    }
                    let taken = Array(state.pending.prefix(count))
                    state.pending.removeFirst(count)
                    return taken
                }
                return [state.pending.removeFirst()]
            }
            guard let taken else { return }
            batch = taken
            (firstSequence, offset) = state.withLock { ($0.nextSequence, $0.endOffset) }
            if let failure = state.withLock({ $0.failure }) {
                for request in batch { request.continuation.resume(returning: .failure(failure)) }
                continue
            }

            var bytes: [UInt8] = []
            bytes.reserveCapacity(batch.reduce(0) { $0 + $1.byteCount })
            var firstOfRequest: [UInt64] = []
            var sequence = firstSequence
            let (header, horizon) = state.withLock { ($0.header, $0.durableEnd) }
            for request in batch {
                firstOfRequest.append(sequence)
                for record in request.records {
                    RecordFrame.encode(type: record.type, header: header, sequence: sequence, horizon: horizon,
                                       payload: record.payload, into: &bytes)
                    sequence += 1
                }
            }
            do {
                try preallocate(through: offset + Int64(bytes.count))
                try io.writeAll(fd, bytes, at: offset, path: path)
            } catch {
                // Nothing was appended.
                let failure = cutBackFailedWrite(at: offset, length: bytes.count, error)
                for request in batch { request.continuation.resume(returning: .failure(failure)) }
                continue
            }
            // The records are in the file (not yet durable): a sync from here
            // on covers them, and the next batch follows them.
            state.withLock {
                $0.unsynced = true
                $0.unclaimedRecords = true
                $0.nextSequence = sequence
                $0.endOffset = offset + Int64(bytes.count)
            }
            if mode != .bulk {
                do { try syncOrFail() } catch {
                    for request in batch { request.continuation.resume(returning: .failure(error)) }
                    return drainStopped()
                }
            }
            for (index, request) in batch.enumerated() {
                request.continuation.resume(returning: .success(firstOfRequest[index]))
            }
        }
    }

    func drainStopped() {
        let waiting = state.withLock { state -> [Pending] in
            state.drainScheduled = false
            let waiting = state.pending
            state.pending = []
            return waiting
        }
        let failure = state.withLock { $0.failure } ?? .closed(path: path)
        for request in waiting { request.continuation.resume(returning: .failure(failure)) }
    }

    /// Makes every record written so far durable. In durable and group-commit
    /// modes appends already are; this matters for ``Mode/bulk``.
    package func sync() async throws(JournalError) {
        try await BlockingIO.run(on: queue) { () throws(JournalError) in
            try self.state.withLock { (state) throws(JournalError) in
                if let failure = state.failure { throw failure }
                if state.closed { throw .closed(path: self.path) }
            }
            try self.flushBuffer()
            let needed = self.state.withLock { $0.unsynced }
            guard needed else { return }
            try self.syncOrFail()
        }
    }

    /// Syncs the file; on failure the writer turns read-only for good.
    func syncOrFail() throws(JournalError) {
        do {
            let end = state.withLock { $0.endOffset }
            try io.system.fdatasync(fd)
            state.withLock {
                $0.unsynced = false
                $0.syncCount += 1
                $0.durableEnd = max($0.durableEnd, end)
            }
        } catch {
            // Never retried: the kernel may have dropped the dirty pages and a
            // second fdatasync could report success for data that is gone.
            let failure = JournalError.writerFailed(path: path, cause: error.at(path))
            let waiting = state.withLock { state -> [Pending] in
                state.syncCount += 1
                state.failure = failure
                let waiting = state.pending
                state.pending = []
                return waiting
            }
            for request in waiting { request.continuation.resume(returning: .failure(failure)) }
            throw failure
        }
    }
}

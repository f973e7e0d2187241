import SyncJournalProtocol
import SyncJournalCore

extension LocalStore {
    /// Journals the events `compute` returns, applies them, and returns once
    /// they are durable and visible.
    func submit(checkpoint: Bool = false,
                _ compute: @escaping (StoreState) throws(StoreError) -> [StoreEvent]) async throws(StoreError) {
        try checkWritable()
        let result: Result<Void, StoreError> = await withCheckedContinuation { continuation in
            let request = WriteBatcher.Request(compute: compute, checkpoint: checkpoint, continuation: continuation)
            if batcher.enqueue(request) {
                Task { await self.flush() }
            }
        }
        try result.get()
    }

    /// Refuses every queued change with `error`.
    func failPending(_ error: StoreError) {
        for request in batcher.takeAll() { request.continuation.resume(returning: .failure(error)) }
    }

    /// Forms batches from the queued requests, one journal write at a time.
    private func flush() async {
        defer { batcher.flushEnded() }
        while batcher.hasPending {
            guard case .ready = currentStatus, let writer else {
                failPending(currentStatus == .retired ? .retired : .closed)
                return
            }
            let batch = batcher.nextBatch()
            if batch.count == 1 && batch[0].checkpoint {
                await runCheckpoint(batch[0], writer: writer)
                continue
            }
            let decision = WriteBatcher.decide(batch, staged: &staged)
            if !decision.records.isEmpty {
                do {
                    try await writer.append(records: decision.records)
                } catch {
                    // Nothing was appended: the view and the outbox stay as they were.
                    staged = state
                    if case .writerFailed = error {
                        currentStatus = .failed(reason: error.description)
                        writerFailure = error
                    }
                    for (request, result) in zip(batch, decision.results) {
                        if case .success = result { request.continuation.resume(returning: .failure(.journal(error))) } else {
                            request.continuation.resume(returning: result)
                        }
                    }
                    continue
                }
                // Retired while the write was in flight: the records are in the
                // journal (a reopened store replays them) but this store changes nothing more.
                guard case .ready = currentStatus else {
                    for request in batch { request.continuation.resume(returning: .failure(.retired)) }
                    failPending(.retired)
                    return
                }
                for event in decision.events { state.apply(event) }
                journalRecords += decision.records.count
                publish(decision.events)
            }
            for (request, result) in zip(batch, decision.results) { request.continuation.resume(returning: result) }
            if options.checkpointThreshold > 0 && journalRecords - state.liveItemCount > options.checkpointThreshold {
                await runCheckpoint(nil, writer: writer)
            }
        }
    }

    /// Rewrites the journal as a checkpoint of the current state.
    private func runCheckpoint(_ request: WriteBatcher.Request?, writer: JournalWriter) async {
        // The parts are made, encoded and written on the writer's queue, a
        // chunk at a time, from this copy of the state (the store goes on with its own).
        let checkpointed = state
        do {
            let written = try await writer.rewrite { (file) throws(JournalError) in
                var failure: JournalError?
                checkpointed.forEachCheckpointPart { part in
                    let event = StoreEvent.checkpoint(part)
                    do throws(JournalError) { try file.append(type: event.recordType, payload: event.encodedPayload()) } catch {
                        failure = error
                        return false
                    }
                    return true
                }
                if let failure { throw failure }
            }
            journalRecords = written.records
            request?.continuation.resume(returning: .success(()))
        } catch {
            if case .writerFailed = error {
                currentStatus = .failed(reason: error.description)
                writerFailure = error
            }
            request?.continuation.resume(returning: .failure(.journal(error)))
        }
    }
}

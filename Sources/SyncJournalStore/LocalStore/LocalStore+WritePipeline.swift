import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalCore

// The store drives the journal's one write path (`JournalWriter+WritePath`)
// from its own thread (its executor), which may block: a batch is decided,
// encoded and written there with no hand-over. The barrier runs outside the
// actor (the executor's standby thread serves it meanwhile), so the store
// stays responsive (reads, retire) and the next batch is written meanwhile;
// the commit queue says which batches a returned barrier makes durable. A
// power cut may then keep a later batch without an earlier one, which
// format 2's recovery rule allows for (the later batch's records carry the
// older sync horizon).
extension LocalStore {
    /// Journals the events `compute` returns, applies them, and returns once
    /// they are durable and visible.
    /// `sharesState: false` marks a write that another follows at once (a
    /// sync engine's hand-over): it leaves the two states apart.
    func submit(checkpoint: Bool = false, sharesState: Bool = true,
                _ compute: @escaping (StoreState) throws(StoreError) -> [StoreEvent]) async throws(StoreError) {
        try checkWritable()
        let result: Result<Void, StoreError> = await withCheckedContinuation { continuation in
            batcher.enqueue(WriteBatcher.Request(compute: compute, checkpoint: checkpoint, sharesState: sharesState,
                                                 continuation: continuation))
            startFlushIfIdle()
        }
        try result.get()
    }

    /// Journals the events `compute` returns for an edit handed in from
    /// outside the actor (``WriteInbox``), tells the edit observer, and
    /// returns once the edit is durable and visible. The caller waits off
    /// the store's thread and is resumed from it directly.
    nonisolated func submitEdit(_ compute: @escaping @Sendable (StoreState) throws(StoreError) -> [StoreEvent]) async throws(StoreError) {
        let result: Result<Void, StoreError> = await withCheckedContinuation { continuation in
            let request = WriteBatcher.Request(compute: compute, checkpoint: false, sharesState: true, notifiesEditObserver: true,
                                               continuation: continuation)
            let queueDrain = inbox.withLock { inbox -> Bool in
                inbox.requests.append(request)
                defer { inbox.drainQueued = true }
                return !inbox.drainQueued
            }
            if queueDrain { executor.perform { self.assumeIsolated { $0.drainInbox() } } }
        }
        try result.get()
    }

    /// Moves the edits handed in from outside into the batcher (on the
    /// store's thread), refusing them if the store no longer takes writes.
    private func drainInbox() {
        let requests = inbox.withLock { inbox -> [WriteBatcher.Request] in
            inbox.drainQueued = false
            defer { inbox.requests = [] }
            return inbox.requests
        }
        for request in requests {
            do throws(StoreError) {
                try checkWritable()
                batcher.enqueue(request)
            } catch {
                request.continuation.resume(returning: .failure(error))
            }
        }
        startFlushIfIdle()
    }

    /// Starts forming batches unless that is already under way. The flush
    /// runs after the jobs already queued on the store's thread, so changes
    /// that arrived together go in one batch.
    func startFlushIfIdle() {
        guard batcher.claimFlush() else { return }
        Task { await self.flush() }
    }

    /// Refuses every queued change with `error`.
    func failPending(_ error: StoreError) {
        for request in batcher.takeAll() { request.continuation.resume(returning: .failure(error)) }
    }

    /// Forms batches from the queued requests and writes them, one at a time.
    private func flush() async {
        defer { batcher.flushEnded() }
        while case .ready = currentStatus, let writer, batcher.hasPending {
            // An automatic checkpoint ready to replace the journal waits only
            // for the batches being synced: new ones wait for it (resumed
            // by the switch).
            if checkpointInProgress?.readyToSwitch == true { return }
            if batcher.nextIsCheckpoint {
                // Resumed by the sync that makes the written batches durable,
                // or by the end of an automatic checkpoint.
                guard batcher.commits.isIdle, checkpointInProgress == nil else { return }
                await runCheckpoint(batcher.nextBatch()[0], writer: writer)
                continue
            }
            write(batcher.nextBatch(), writer: writer)
        }
        if batcher.hasPending { failPending(currentStatus == .retired ? .retired : .closed) }
    }

    /// Decides `batch`, writes it, and has a barrier cover it.
    private func write(_ batch: [WriteBatcher.Request], writer: JournalWriter) {
        let decision = states.decide(batch)
        guard !decision.records.isEmpty else {
            // Nothing to write: answered with the batch written before it.
            if !batcher.commits.follow([WriteBatcher.Written(requests: batch, decision: decision)]) {
                for (request, result) in zip(batch, decision.results) { request.continuation.resume(returning: result) }
            }
            return
        }
        var end: Int64?
        do {
            end = try writer.write(records: decision.records)
            if end == nil {
                // Too much written and not yet synced (format 2's in-flight
                // limit): a barrier here makes room, then the write.
                // The staged state already holds this batch: it cannot stand for the visible state.
                complete(batcher.commits.released(durableThrough: try writer.barrier()), stagedIsWrittenOnly: false)
                end = try writer.write(records: decision.records)
            }
        } catch {
            writeFailed(batch, decision, error)
            return
        }
        guard let end else {
            // Only a batch larger than the limit itself finds no room after a barrier.
            let bytes = decision.records.reduce(0) { $0 + JournalFormat.recordHeaderLength + $1.payload.count }
            writeFailed(batch, decision, .recordTooLarge(bytes: bytes, maximum: Int(JournalFormat.defaultInFlightLimit)))
            return
        }
        batcher.commits.wrote(end: end, waiters: [WriteBatcher.Written(requests: batch, decision: decision)])
        // Journaled after the state an automatic checkpoint took: copied after it.
        checkpointInProgress?.tail += decision.records
        if batcher.commits.barrierStarting() { scheduleBarrier(writer: writer) }
    }

    /// Runs the barrier the commit queue just started after the jobs queued
    /// now (batches written meanwhile are covered too), on the store's
    /// thread but outside the actor: the jobs that arrive meanwhile (reads,
    /// the next batches) run on a standby thread, and when none did, the
    /// thread that synced acknowledges at once, so a lone edit is written,
    /// synced and acknowledged with no hand-over between threads.
    private func scheduleBarrier(writer: JournalWriter) {
        executor.perform { self.assumeIsolated { $0.runBarrier(writer: writer) } }
    }

    /// Syncs outside the actor, then acknowledges what the barrier covers:
    /// on this thread when the store is idle, else after the jobs that
    /// arrived meanwhile.
    private func runBarrier(writer: JournalWriter) {
        // Touches only the writer: the actor's state may change meanwhile,
        // as across an `await`.
        executor.runOutside({ () -> Result<Int64, JournalError> in
            do throws(JournalError) { return .success(try writer.barrier()) } catch { return .failure(error) }
        }, then: { result in self.assumeIsolated { $0.barrierEnded(result, writer: writer) } })
    }

    /// Back in the actor after a barrier.
    private func barrierEnded(_ result: Result<Int64, JournalError>, writer: JournalWriter) {
        switch result {
        case .success(let durableEnd):
            let (released, stillWaiting) = batcher.commits.barrierEnded(durableThrough: durableEnd)
            complete(released, stagedIsWrittenOnly: true)
            if stillWaiting, case .ready = currentStatus, batcher.commits.barrierStarting() { scheduleBarrier(writer: writer) }
        case .failure(let error):
            failWritten(error)
        }
        if !batcher.commits.barrierRunning {
            for waiter in syncIdleWaiters { waiter.resume() }
            syncIdleWaiters = []
        }
        keepJournalSmall()
        if batcher.hasPending { startFlushIfIdle() }
    }

    /// Returns once no barrier is running (before the file is closed under it).
    func waitForSyncs() async {
        guard batcher.commits.barrierRunning else { return }
        await withCheckedContinuation { syncIdleWaiters.append($0) }
    }

    /// Makes the batches a barrier released visible, and resumes their
    /// callers. `stagedIsWrittenOnly` says that the staged state is the
    /// visible state plus the written batches and nothing else.
    private func complete(_ synced: [WriteBatcher.Written], stagedIsWrittenOnly: Bool) {
        guard !synced.isEmpty else { return }
        // The touched keys serve only indexes and observed queries: a
        // store with neither skips their lookups on the append path.
        let tracking = followsVisibleChanges
        // When every written batch is durable with the last one, the staged
        // state holds exactly the visible state's events plus the last's.
        let last = synced.lastIndex { !$0.decision.events.isEmpty }
        let stagedFollows = stagedIsWrittenOnly && !batcher.commits.hasWritten
            && (last.map { synced[$0].requests.allSatisfy(\.sharesState) } ?? false)
        for (position, batch) in synced.enumerated() {
            if !batch.decision.events.isEmpty {
                var touched: [RecordKey] = []
                states.makeVisible(batch.decision.events, stagedIsWhatFollows: stagedFollows && position == last,
                                   tracking: tracking, touched: &touched)
                journalRecords += batch.decision.records.count
                visibleStateChanged(touched, events: batch.decision.events)
            }
            // The engine hears of the batch's edits once, before their callers resume.
            if zip(batch.requests, batch.decision.results).contains(where: { request, result in
                if case .success = result { return request.notifiesEditObserver } else { return false }
            }) {
                notifyEditObserver()
            }
            for (request, result) in zip(batch.requests, batch.decision.results) { request.continuation.resume(returning: result) }
        }
    }

    /// A sync failed: every batch written before it returned fails (later
    /// ones were decided on top of them), and so does the store, for good.
    private func failWritten(_ error: JournalError) {
        states.dropInFlight()
        if case .ready = currentStatus {
            currentStatus = .failed(reason: error.description)
            writerFailure = error
        }
        for batch in batcher.commits.barrierFailed() { refuse(batch.requests, batch.decision.results, error) }
        failPending(.journal(error))
    }

    /// The write of `batch` failed: nothing of it was appended, so the view
    /// and the outbox stay as they were.
    private func writeFailed(_ batch: [WriteBatcher.Request], _ decision: WriteBatcher.Decision, _ error: JournalError) {
        // What later changes are decided against: the durable state and the batches being synced.
        states.restage(inFlight: batcher.written)
        if case .writerFailed = error, case .ready = currentStatus {
            currentStatus = .failed(reason: error.description)
            writerFailure = error
        }
        refuse(batch, decision.results, error)
    }

    /// Resumes the requests whose change succeeded with `error`, the others with their own result.
    private func refuse(_ requests: [WriteBatcher.Request], _ results: [Result<Void, StoreError>], _ error: JournalError) {
        for (request, result) in zip(requests, results) {
            if case .success = result { request.continuation.resume(returning: .failure(.journal(error))) } else {
                request.continuation.resume(returning: result)
            }
        }
    }

    /// Refuses the batches still being synced (the store retired).
    func refuseWritten(_ error: StoreError) {
        for batch in batcher.commits.takeAll() {
            for request in batch.requests { request.continuation.resume(returning: .failure(error)) }
        }
    }

    /// Rewrites the journal as a checkpoint of the current state, on the
    /// write path (``checkpoint()``): edits queued meanwhile wait for it.
    private func runCheckpoint(_ request: WriteBatcher.Request?, writer: JournalWriter) async {
        // The parts are made, encoded and written on the writer's queue, a
        // chunk at a time, from this copy of the state (the store goes on with its own).
        let checkpointed = state
        do {
            let written = try await writer.rewrite { (file) throws(JournalError) in try checkpointed.writeCheckpoint(to: &file) }
            journalRecords = written.records
            measureCheckpoint(bytes: writer.endOffset, liveItems: checkpointed.liveItemCount)
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

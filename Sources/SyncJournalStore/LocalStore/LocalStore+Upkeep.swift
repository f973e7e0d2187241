import SyncJournalProtocol
import SyncJournalCore

// Automatic checkpoints (``LocalStore/UpkeepPolicy``), written beside the
// journal while edits go on:
//
// 1. after a sync, on the store's thread: the policy says the journal is
//    due; the visible state is taken as it stands (a value: the store goes
//    on with its own copy), with the batches written but not yet synced as
//    the first records to copy, and the writer starts the new file;
// 2. on the writer's queue: the state's parts are written and synced, while
//    batches go on being written, synced and acknowledged on the old
//    journal, each also kept in memory as a record to copy;
// 3. back on the store's thread once no batch waits for a sync (new
//    batches wait meanwhile): the records to copy go after the parts, the
//    file is closed, synced, renamed over the journal, the directory is
//    synced, and the next batch goes to the new file.
//
// Every record copied was durable in the old journal before the rename, and
// the new file was synced before it: a crash before the rename keeps the
// old journal (the leftover is proven redundant at the next open), after
// it the new one, each with every acknowledged edit.
extension LocalStore {
    /// After a sync: switches to an automatic checkpoint that is ready and
    /// no longer waits for a sync, or starts one when the journal is due.
    func keepJournalSmall() {
        if let progress = checkpointInProgress {
            if progress.readyToSwitch && !batcher.commits.barrierRunning { switchToCheckpoint() }
            return
        }
        guard options.upkeep.isEnabled, case .ready = currentStatus, let writer else { return }
        let liveItems = state.liveItemCount
        let journalBytes = writer.endOffset
        guard journalBytes >= upkeepRetryBytes, options.upkeep.isDue(journalBytes: journalBytes, journalRecords: journalRecords,
                                   liveBytes: estimatedLiveBytes(journalBytes: journalBytes, liveItems: liveItems),
                                   liveItems: liveItems) else { return }
        startCheckpointBesideJournal(writer: writer)
    }

    /// What a checkpoint of the state would take, estimated from counts the
    /// state keeps: the last checkpoint's bytes per live item. Before this
    /// store made one: half the journal's bytes per record or per live item,
    /// whichever is smaller. A record carries its frame and its operation's
    /// id and stamps, which a checkpoint packs (an edit of 200 bytes takes
    /// about 160 in one), so this errs towards an early first checkpoint,
    /// which then measures; a journal that is one checkpoint, or only
    /// distinct creates, is never found due by it.
    func estimatedLiveBytes(journalBytes: Int64, liveItems: Int) -> Int64 {
        let perItem = checkpointBytesPerLiveItem ?? Double(journalBytes) / Double(max(1, journalRecords, liveItems)) / 2
        return Int64(perItem * Double(liveItems))
    }

    /// Records the size per live item of a checkpoint just written.
    func measureCheckpoint(bytes: Int64, liveItems: Int) {
        checkpointBytesPerLiveItem = Double(bytes) / Double(max(1, liveItems))
    }

    /// Returns once no automatic checkpoint is being written (for tests and
    /// benchmarks that look at the journal afterwards).
    package func waitForUpkeep() async {
        guard checkpointInProgress != nil else { return }
        await withCheckedContinuation { upkeepWaiters.append($0) }
    }

    /// Whether an automatic checkpoint is being written.
    package var isCheckpointing: Bool { checkpointInProgress != nil }

    /// Bytes of the journal up to its last record (preallocated zeros not counted).
    package var journalBytes: Int64 { writer?.endOffset ?? 0 }

    /// Starts an automatic checkpoint now, whatever the policy says (tests
    /// that stage a race around one). `false` when one is running already or
    /// the store cannot write.
    @discardableResult
    package func startAutomaticCheckpoint() -> Bool {
        guard checkpointInProgress == nil, case .ready = currentStatus, let writer else { return false }
        startCheckpointBesideJournal(writer: writer)
        return checkpointInProgress != nil
    }

    /// Takes the state and starts writing its checkpoint on the writer's queue.
    private func startCheckpointBesideJournal(writer: JournalWriter) {
        let checkpoint: BackgroundCheckpoint
        // A writer that failed or closed refuses: the next write reports it.
        do { checkpoint = try writer.beginBackgroundCheckpoint() } catch { return }
        let taken = state
        // Written but not yet synced: in the journal after the state taken.
        let unsynced = batcher.written.flatMap(\.decision.records)
        checkpointInProgress = CheckpointInProgress(checkpoint: checkpoint, tail: unsynced, liveItems: taken.liveItemCount)
        Task { await self.writeCheckpoint(checkpoint, of: taken, writer: writer) }
    }

    /// Writes the parts on the writer's queue; then switches, or waits for
    /// the syncs under way to end.
    private func writeCheckpoint(_ checkpoint: BackgroundCheckpoint, of taken: StoreState, writer: JournalWriter) async {
        do {
            try await writer.writeBackgroundCheckpoint(checkpoint) { (file) throws(JournalError) in try taken.writeCheckpoint(to: &file) }
        } catch {
            // The journal is as it was (the file beside it is removed): tried
            // again once the journal has grown by half, if still due then.
            if case .closed = error {} else { upkeepRetryBytes = writer.endOffset + writer.endOffset / 2 }
            endCheckpoint(checkpoint)
            return
        }
        guard checkpointInProgress?.checkpoint === checkpoint else { return }
        checkpointInProgress?.readyToSwitch = true
        if !batcher.commits.barrierRunning { switchToCheckpoint() }
    }

    /// Replaces the journal with the checkpoint, the records journaled
    /// since its state was taken copied after it. On the store's thread,
    /// with no batch waiting for a sync.
    private func switchToCheckpoint() {
        guard let progress = checkpointInProgress, progress.readyToSwitch, batcher.commits.isIdle else { return }
        guard case .ready = currentStatus, let writer else {
            writer?.abandonBackgroundCheckpoint(progress.checkpoint)
            endCheckpoint(progress.checkpoint)
            return
        }
        do {
            journalRecords = try writer.switchToBackgroundCheckpoint(progress.checkpoint, appending: progress.tail)
            automaticCheckpoints += 1
            measureCheckpoint(bytes: progress.checkpoint.partBytes, liveItems: progress.liveItems)
            upkeepRetryBytes = 0
        } catch {
            if case .closed = error {} else { upkeepRetryBytes = writer.endOffset + writer.endOffset / 2 }
            // Before the rename the old journal stays in use; after it the failure is final.
            if case .writerFailed = error, case .ready = currentStatus {
                currentStatus = .failed(reason: error.description)
                writerFailure = error
                failPending(.journal(error))
            }
        }
        endCheckpoint(progress.checkpoint)
    }

    /// The automatic checkpoint ended (replaced the journal, failed, or was
    /// abandoned): waiters resume and the batches held for it go on.
    private func endCheckpoint(_ checkpoint: BackgroundCheckpoint) {
        guard checkpointInProgress?.checkpoint === checkpoint else { return }
        checkpointInProgress = nil
        for waiter in upkeepWaiters { waiter.resume() }
        upkeepWaiters = []
        if batcher.hasPending { startFlushIfIdle() }
    }
}

import SyncJournalProtocol
import SyncJournalCore

/// Groups the store's changes into journal appends: changes that arrive while
/// a batch is being written wait here and go together in the next one (one
/// write). Each change is decided against the state staged by the changes
/// before it, when its batch is formed. Written batches wait here for the
/// barrier that covers them, in order, by the journal's commit rule: while
/// one is synced the next ones are written (one barrier then covers them
/// all). One batcher per store, used on the store's actor.
struct WriteBatcher {
    /// A change waiting to be journaled: it computes its events against the
    /// state staged so far, when its batch is formed.
    struct Request {
        /// The events of the change, decided against the staged state.
        var compute: (StoreState) throws(StoreError) -> [StoreEvent]
        /// Whether the change is a checkpoint (a rewrite of the journal, not an append).
        var checkpoint: Bool
        /// Whether, once durable with nothing else unsynced, the decided state
        /// may take the visible state's place and share its storage. A sync
        /// engine's hand-overs say no: its next round follows at once, and
        /// would copy every part it touches.
        var sharesState = true
        /// Whether the edit observer (the sync engine) hears of the change
        /// once it is durable, before its caller resumes.
        var notifiesEditObserver = false
        /// Resumed once the change is durable and visible, or refused.
        var continuation: CheckedContinuation<Result<Void, StoreError>, Never>
    }

    /// What a batch decided: the events to apply, the records to append, and
    /// each request's own result (one that failed does not fail the others).
    struct Decision {
        /// The events of the requests that succeeded, in order.
        var events: [StoreEvent] = []
        /// Those events as journal records.
        var records: [(type: RecordType, payload: [UInt8])] = []
        /// One result per request of the batch, in order.
        var results: [Result<Void, StoreError>] = []
    }

    /// A batch in the journal file, not yet durable (or one that wrote
    /// nothing and waits for the batch before it): its callers wait for a
    /// barrier that covers it.
    struct Written {
        /// The requests of the batch, in order.
        var requests: [Request]
        /// What they decided.
        var decision: Decision
    }

    private var pending: [Request] = []
    /// Written batches and the barrier over them: the journal's commit
    /// rule (`CommitQueue`), the same one every writer of a journal follows.
    var commits = CommitQueue<Written>()
    /// Whether a flush is running; a change queued meanwhile joins its next batch.
    private(set) var flushing = false

    /// Written batches awaiting their barrier, in file order.
    var written: [Written] { commits.waiters }

    /// Whether anything is queued, being written or being synced.
    var isBusy: Bool { !pending.isEmpty || flushing || !commits.isIdle }

    /// Whether requests are waiting for a batch.
    var hasPending: Bool { !pending.isEmpty }

    /// How many requests wait for a batch.
    var pendingCount: Int { pending.count }

    /// Whether the next batch is a checkpoint.
    var nextIsCheckpoint: Bool { pending.first?.checkpoint ?? false }

    /// Queues `request`.
    mutating func enqueue(_ request: Request) { pending.append(request) }

    /// Marks a flush as running; `false` when one already is.
    mutating func claimFlush() -> Bool {
        guard !flushing else { return false }
        flushing = true
        return true
    }

    /// The flush ended.
    mutating func flushEnded() { flushing = false }

    /// Takes every queued request (to refuse them all).
    mutating func takeAll() -> [Request] {
        let waiting = pending
        pending = []
        return waiting
    }

    /// Takes the next batch: queued requests in order, up to a checkpoint. A
    /// checkpoint ends a batch, so it sees everything before it, and is a
    /// batch of its own.
    mutating func nextBatch() -> [Request] {
        // Cut in one piece (not request by request from the front): with
        // many editors the queue holds dozens of requests per batch.
        let end: Int
        if let checkpoint = pending.firstIndex(where: { $0.checkpoint }) {
            end = checkpoint == 0 ? 1 : checkpoint
        } else {
            end = pending.count
        }
        if end == pending.count {
            var batch: [Request] = []
            swap(&batch, &pending)
            return batch
        }
        let batch = Array(pending[..<end])
        pending.removeFirst(end)
        return batch
    }

    /// Decides each request of `batch` against `staged`, applying the events
    /// of each that succeeds to `staged` so the next one sees them.
    static func decide(_ batch: [Request], staged: inout StoreState) -> Decision {
        var decision = Decision()
        for request in batch {
            do throws(StoreError) {
                let decided = try request.compute(staged)
                let encoded = decided.map { (type: $0.recordType, payload: $0.encodedPayload()) }
                // Checked per request, so one oversized change fails alone
                // instead of failing everything written with it.
                if let large = encoded.first(where: { $0.payload.count > JournalFormat.maximumPayloadLength }) {
                    throw .tooLarge(bytes: large.payload.count, maximum: JournalFormat.maximumPayloadLength)
                }
                for event in decided { staged.apply(event) }
                decision.events += decided
                decision.records += encoded
                decision.results.append(.success(()))
            } catch {
                decision.results.append(.failure(error))
            }
        }
        return decision
    }
}

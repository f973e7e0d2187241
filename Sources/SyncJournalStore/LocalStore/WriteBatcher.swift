import SyncJournalProtocol
import SyncJournalCore

/// Groups the store's changes into journal appends: changes that arrive while
/// a write is being synced wait here and go together in the next one (one
/// append, one `fdatasync`). Each change is decided against the state staged
/// by the changes before it, when its batch is formed. One batcher per store,
/// used on the store's actor.
struct WriteBatcher {
    /// A change waiting to be journaled: it computes its events against the
    /// state staged so far, when its batch is formed.
    struct Request {
        /// The events of the change, decided against the staged state.
        var compute: (StoreState) throws(StoreError) -> [StoreEvent]
        /// Whether the change is a checkpoint (a rewrite of the journal, not an append).
        var checkpoint: Bool
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

    private var pending: [Request] = []
    /// Whether a flush is running; a change queued meanwhile joins its next batch.
    private(set) var flushing = false

    /// Whether anything is queued or being written.
    var isBusy: Bool { !pending.isEmpty || flushing }

    /// Whether requests are waiting for a batch.
    var hasPending: Bool { !pending.isEmpty }

    /// Queues `request`; returns `true` when no flush is running, so the
    /// caller must start one.
    mutating func enqueue(_ request: Request) -> Bool {
        pending.append(request)
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
        var batch: [Request] = []
        while !pending.isEmpty {
            let next = pending.removeFirst()
            if next.checkpoint && !batch.isEmpty {
                pending.insert(next, at: 0)
                break
            }
            batch.append(next)
            if next.checkpoint { break }
        }
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

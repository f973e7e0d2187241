import SyncJournalProtocol
import SyncJournalPlatform
import SyncJournalCore
import Dispatch

/// Rebuilds a store's state from its journal: the same fold the live store
/// runs (``StoreState/apply(_:)``), over the records read back.
package enum Replayer {
    /// What replay rebuilt.
    package struct Result: Sendable {
        /// The state after the last valid record.
        package var state: StoreState
        /// Records read.
        package var records: Int
        /// How the journal was found.
        package var report: JournalScanReport
    }

    /// Why a journal cannot be replayed even though its records verify.
    package enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// A record's payload does not decode, or its type is unknown and not skippable.
        case undecodable(JournalEntry.DecodeError)
        /// A checkpoint at the start of the file stops before its end part, or
        /// its parts do not add up to the counts the end part names.
        case incompleteCheckpoint(sequence: UInt64?, reason: String)
        /// A checkpoint part appears after ordinary records.
        case misplacedCheckpoint(sequence: UInt64)
        /// A record decodes but cannot apply to the state before it (say, a
        /// compaction that replaces an operation by one on another record):
        /// no store writes it, so the file was not written by one.
        case inconsistent(sequence: UInt64, reason: String)
        /// The file is damaged beyond a torn tail.
        case corrupt(JournalStatus)
        /// The file is intact but holds, at `offset`, a record this version
        /// does not understand (a newer one wrote it).
        case unsupported(offset: Int64, reason: UnsupportedContent)

        /// A one-line explanation.
        package var description: String {
            switch self {
            case .undecodable(let error): return error.description
            case .incompleteCheckpoint(let sequence, let reason): return "incomplete checkpoint\(sequence.map { " at record \($0)" } ?? ""): \(reason)"
            case .misplacedCheckpoint(let sequence): return "checkpoint part in record \(sequence) after ordinary records"
            case .inconsistent(let sequence, let reason): return "record \(sequence) does not apply to the state before it: \(reason)"
            case .corrupt(let status): return status.description
            case .unsupported(let offset, let reason): return "read-only for this version: at offset \(offset), \(reason)"
            }
        }
    }

    /// The fold over a sequence of records, checking the checkpoint framing.
    ///
    /// Merged edits (``MergedEdit``) are not applied one by one: the fold
    /// keeps the latest replacement of each queued operation and builds it
    /// when another kind of record arrives or the fold finishes, so the
    /// state is complete once ``finish(header:)`` has returned.
    package struct Fold: Sendable {
        /// The state so far, without the merges still pending.
        private var settled = StoreState()
        /// The latest merged replacement of queued operations, not built yet.
        private var pending: [OperationID: MergedEdit] = [:]
        private var phase = Phase.start
        private var checkpointCounts = (rows: 0, operations: 0, conflicts: 0, rejections: 0)
        /// Records folded so far.
        package private(set) var records = 0

        private enum Phase { case start, inCheckpoint, body }

        /// An empty fold.
        package init() {}

        /// The state rebuilt: complete after ``finish(header:)`` (or
        /// ``finish(after:)``) has returned; before that, merges may still be pending.
        package var state: StoreState { settled }

        /// Folds one verified record.
        package mutating func fold(_ record: JournalRecord) throws(Failure) {
            try fold(Self.prepare(record), sequence: record.sequence)
        }

        /// Decodes a verified record for ``fold(_:sequence:)``: `nil` for a
        /// record that carries no event. Needs no state, so it may run ahead
        /// of the fold, on another thread.
        package static func decode(_ record: JournalRecord) throws(Failure) -> StoreEvent? {
            do { return try StoreEvent.decode(record, forFold: true) } catch { throw .undecodable(error) }
        }

        /// Prepares a verified record for ``fold(_:sequence:)``: a merged
        /// edit is checked and kept as bytes, any other record decoded as by
        /// ``decode(_:)``. Needs no state, so it may run ahead of the fold.
        package static func prepare(_ record: JournalRecord) throws(Failure) -> ReplayInput {
            if let merged = MergedEdit.recognise(record) { return .merged(merged) }
            return .event(try decode(record))
        }

        /// Folds the input prepared from record `sequence` (``prepare(_:)``).
        package mutating func fold(_ input: ReplayInput, sequence: UInt64) throws(Failure) {
            switch input {
            case .event(let event):
                try fold(event, sequence: sequence)
            case .merged(let merged):
                if phase == .inCheckpoint {
                    records += 1
                    throw .incompleteCheckpoint(sequence: sequence, reason: "ordinary record before the end part")
                }
                // The merge can wait only when folding it would change
                // nothing but the queued operation's contents: the edit is not
                // queued itself, no base row may need forgetting, and the
                // replacement keeps the queued operation's record (otherwise
                // the full decode and fold decide, and report what is wrong).
                if settled.baseRows.isEmpty, !settled.outbox.contains(merged.editID) {
                    guard let key = settled.outbox.key(of: merged.target) else {
                        // Nothing queued to replace: folding the edit changes nothing.
                        records += 1
                        phase = .body
                        return
                    }
                    if merged.replaces(on: key) {
                        records += 1
                        phase = .body
                        pending[merged.target] = merged
                        return
                    }
                }
                try fold(Self.decode(merged.record), sequence: sequence)
            }
        }

        /// Folds the event decoded from record `sequence` (``decode(_:)``).
        package mutating func fold(_ event: StoreEvent?, sequence: UInt64) throws(Failure) {
            // Records that carry no event (a writer's closing horizon record)
            // do not count towards a checkpoint: they change no state.
            guard let event else { return }
            records += 1
            try settlePending()
            if case .checkpoint(let part) = event {
                switch phase {
                case .body: throw .misplacedCheckpoint(sequence: sequence)
                case .start, .inCheckpoint: phase = .inCheckpoint
                }
                switch part {
                case .rows(let rows): checkpointCounts.rows += rows.count
                case .outbox(let operations): checkpointCounts.operations += operations.count
                case .conflicts(let values): checkpointCounts.conflicts += values.count
                case .rejections(let values): checkpointCounts.rejections += values.count
                case .cursors, .spaceCursors, .spaces, .baseRows, .server: break
                case .end(let rows, let operations, let conflicts, let rejections):
                    let counted = checkpointCounts
                    guard counted.rows == rows, counted.operations == operations, counted.conflicts == conflicts,
                          counted.rejections == rejections else {
                        throw .incompleteCheckpoint(sequence: sequence, reason: "parts hold \(counted) but the end names \((rows, operations, conflicts, rejections))")
                    }
                    phase = .body
                    completedCheckpoint = true
                }
            } else {
                if phase == .inCheckpoint { throw .incompleteCheckpoint(sequence: sequence, reason: "ordinary record before the end part") }
                phase = .body
            }
            if let reason = settled.inconsistency(in: event) { throw .inconsistent(sequence: sequence, reason: reason) }
            settled.apply(event)
        }

        /// Builds the pending replacements into the state. Each was checked
        /// when it was read, so building it does not fail in practice; if it
        /// did, the failure names its record.
        private mutating func settlePending() throws(Failure) {
            guard !pending.isEmpty else { return }
            for merged in pending.values {
                let replacement: JournalOperation
                do { replacement = try merged.replacementOperation() } catch { throw .undecodable(error) }
                settled.replaceQueuedOperation(merged.target, with: replacement)
            }
            pending.removeAll(keepingCapacity: true)
        }

        /// Whether a checkpoint started the records and was finished.
        package private(set) var completedCheckpoint = false

        /// Checks the end of the records: a checkpoint must have been finished,
        /// and a file that continues an earlier generation (`header`) must start with one.
        /// Builds what is still pending into ``state`` first.
        package mutating func finish(header: JournalHeader? = nil) throws(Failure) {
            try settlePending()
            if phase == .inCheckpoint { throw .incompleteCheckpoint(sequence: nil, reason: "the journal ends inside the checkpoint") }
            if let header, header.continuesGeneration != 0, !completedCheckpoint {
                throw .incompleteCheckpoint(sequence: nil, reason: "the file continues generation \(header.continuesGeneration) but does not start with a complete checkpoint")
            }
        }

        /// Checks the end of a whole scan: no state comes from a corrupt journal,
        /// nor from one that holds a record this version would have to skip;
        /// otherwise as ``finish(header:)``.
        package mutating func finish(after report: JournalScanReport) throws(Failure) {
            if case .corrupt = report.status { throw .corrupt(report.status) }
            if case .unsupported(let offset, let reason) = report.status { throw .unsupported(offset: offset, reason: reason) }
            try finish(header: report.header)
        }
    }

    /// Replays the journal at `path`: the state after its valid prefix. A torn
    /// tail is read up to the cut (as opening for writing would cut it);
    /// corruption is a ``Failure/corrupt(_:)``.
    package static func replay(path: String, system: any SystemCalls = PosixSystemCalls()) throws -> Result {
        var fold = Fold()
        let report = try JournalReader(path: path, system: system, understands: StoreEvent.isUnderstood).scan { record in
            try fold.fold(record)
        }
        try fold.finish(after: report)
        return Result(state: fold.state, records: fold.records, report: report)
    }
}

/// A ``Replayer/Fold`` fed from the writer's recovery scan while a store
/// opens, read back once opening has returned.
///
/// The records are decoded on the writer's I/O queue, as the scan reads
/// them, and folded on a queue of their own in batches: on two cores the
/// decoding and the fold run side by side. At most a few batches wait, so
/// memory stays independent of the journal's length. The records are
/// folded in order and the first failure wins, as in a fold of one thread:
/// decoding stops at the first record that does not decode, so a fold
/// failure is always at an earlier record.
final class ReplayDuringOpen: Sendable {
    private typealias Batch = [(input: ReplayInput, sequence: UInt64)]
    private static let batchSize = 1024

    /// Filled by the scan only.
    private let decoding = Mutex<(batch: Batch, failure: Replayer.Failure?)>(([], nil))
    private let folding = Mutex<(fold: Replayer.Fold, failure: Replayer.Failure?)>((Replayer.Fold(), nil))
    private let foldQueue = DispatchQueue(label: "SyncJournal.replay")
    /// Batches handed over and not yet folded.
    private let waiting = DispatchSemaphore(value: 4)

    /// Decodes one record and queues it for the fold; after the first failure the rest are ignored.
    func fold(_ record: JournalRecord) {
        let full: Batch? = decoding.withLock { decoding in
            guard decoding.failure == nil else { return nil }
            do throws(Replayer.Failure) {
                decoding.batch.append((try Replayer.Fold.prepare(record), record.sequence))
            } catch {
                decoding.failure = error
            }
            guard decoding.batch.count >= Self.batchSize || decoding.failure != nil else { return nil }
            let full = decoding.batch
            decoding.batch = []
            decoding.batch.reserveCapacity(Self.batchSize)
            return full
        }
        if let full { handOver(full) }
    }

    /// Queues `batch` for the fold. The scan waits while the fold is several
    /// batches behind; the last batch (`waitingForRoom` false) never waits.
    private func handOver(_ batch: Batch, waitingForRoom: Bool = true) {
        if waitingForRoom { waiting.wait() }
        foldQueue.async { [self] in
            folding.withLock { folding in
                guard folding.failure == nil else { return }
                do throws(Replayer.Failure) {
                    for item in batch { try folding.fold.fold(item.input, sequence: item.sequence) }
                } catch {
                    folding.failure = error
                }
            }
            if waitingForRoom { waiting.signal() }
        }
    }

    /// The state rebuilt, or the first failure; checks the checkpoint framing against `header`.
    func finish(header: JournalHeader) async throws(Replayer.Failure) -> (state: StoreState, records: Int) {
        let (rest, decodeFailure) = decoding.withLock { decoding in
            defer { decoding.batch = [] }
            return (decoding.batch, decoding.failure)
        }
        if !rest.isEmpty { handOver(rest, waitingForRoom: false) }
        // Waits for the fold queue to drain without blocking a thread of the concurrency pool.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in foldQueue.async { done.resume() } }
        return try folding.withLock { (folding) throws(Replayer.Failure) -> (state: StoreState, records: Int) in
            if let failure = folding.failure ?? decodeFailure { throw failure }
            try folding.fold.finish(header: header)
            return (folding.fold.state, folding.fold.records)
        }
    }
}

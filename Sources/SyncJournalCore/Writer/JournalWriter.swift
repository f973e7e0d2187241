import Dispatch
import SyncJournalPlatform

/// Appends records to a journal durably.
///
/// Opening takes an exclusive lock (`<path>.lock`), verifies the file, and
/// repairs a torn tail (the cut bytes go to a side file); a corrupt journal is
/// refused and left untouched. Each `append` returns the record's sequence
/// number once the record is durable (in ``Mode/bulk``, once it is written).
///
/// ```swift
/// let writer = try await JournalWriter.open(path: "journals/app.journal")
/// let seq = try await writer.append(type: .operation, payload: bytes)   // durable now
/// try await writer.close()
/// ```
///
/// Blocking I/O runs on the writer's own Dispatch queue, off the Swift
/// concurrency pool. If an `fdatasync` fails the writer turns read-only for
/// good: every later call throws ``JournalError/writerFailed(path:cause:)``.
package final class JournalWriter: Sendable {
    /// The journal's path.
    package let path: String
    /// The current file's header (a checkpoint rewrite gives the journal a new one).
    package var header: JournalHeader { state.withLock { $0.header } }
    /// What opening found and repaired.
    package let recovery: JournalRecovery
    /// The append mode.
    package let mode: Mode

    let io: FileIO
    let preallocationBytes: Int
    /// The most bytes the writer ever has written past the durable end: the
    /// header's in-flight limit (the default for a 1.x journal, and kept by
    /// a checkpoint, so it never changes while the writer is open).
    let inFlightLimit: Int
    let lockFD: FileDescriptor
    let lockKey: String
    /// The open journal file. Changed only on the writer's queue (by a rewrite).
    var fd: FileDescriptor { state.withLock { $0.fd } }
    /// The writer's serial queue: every write of ``append(records:)``,
    /// every rewrite and the close run on it.
    let queue: DispatchQueue
    /// Where group commit syncs what the writer's queue wrote, so the next
    /// batch is written meanwhile (see `JournalWriter+WritePath.swift`).
    let barrierQueue: DispatchQueue
    let state: Mutex<State>

    /// An append written and waiting for its barrier: its caller and the
    /// sequence number of its first record.
    struct Acknowledgement {
        var continuation: CheckedContinuation<Result<UInt64, JournalError>, Never>
        var sequence: UInt64
    }

    /// One caller's records, written contiguously; the continuation gets the
    /// first record's sequence number.
    struct Pending {
        var records: [(type: RecordType, payload: [UInt8])]
        var continuation: CheckedContinuation<Result<UInt64, JournalError>, Never>
        var byteCount: Int { records.reduce(0) { $0 + $1.payload.count + JournalFormat.recordHeaderLength } }
    }

    /// Everything that changes while the writer is open, behind one lock.
    struct State {
        var header: JournalHeader
        var fd: FileDescriptor
        var pending: [Pending] = []
        var drainScheduled = false
        /// Appends written and waiting for a barrier.
        var commits = CommitQueue<Acknowledgement>()
        /// Set by a failed `fdatasync` (or an unrepairable write failure).
        var failure: JournalError?
        var closed = false
        /// Sequence number of the next record to write.
        var nextSequence: UInt64
        /// End of the last record written successfully.
        var endOffset: Int64
        /// How far the file is known to be durable: the end of the records
        /// covered by the last successful sync. Every record written carries
        /// it as its sync horizon (format 2).
        var durableEnd: Int64
        /// The file's size: `endOffset` plus the zeros preallocated after it.
        var allocatedEnd: Int64
        /// Whether this writer appended records that no later record's
        /// horizon covers yet: a clean close then appends a
        /// ``RecordType/syncHorizon`` record. A writer that appended nothing
        /// leaves the file exactly as it found it (torn tail aside), even
        /// when it crashed before: a store that finds a journal unreadable
        /// never changes it.
        var unclaimedRecords: Bool
        /// Whether bytes were written since the last successful sync (bulk mode).
        var unsynced = false
        /// Bulk mode: encoded records not yet written (the window), and
        /// whether a flush of it is queued.
        var window: [UInt8] = []
        var flushScheduled = false
        var syncCount = 0
        /// The checkpoint being written beside the journal, if any
        /// (``BackgroundCheckpoint``): whoever takes it from here ends it.
        var backgroundCheckpoint: BackgroundCheckpoint?
    }

    /// A writer over a journal that opening has locked, verified and repaired
    /// (see `JournalWriter+Open.swift`).
    init(path: String, header: JournalHeader, recovery: JournalRecovery, mode: Mode, io: FileIO,
         preallocationBytes: Int, fd: FileDescriptor, lockFD: FileDescriptor, lockKey: String,
         nextSequence: UInt64, endOffset: Int64, allocatedEnd: Int64, unclaimedRecords: Bool) {
        self.lockKey = lockKey
        self.path = path
        self.recovery = recovery
        self.mode = mode
        self.io = io
        self.preallocationBytes = preallocationBytes
        inFlightLimit = Int(header.hasSyncHorizons ? header.inFlightLimit : JournalFormat.defaultInFlightLimit)
        self.lockFD = lockFD
        queue = DispatchQueue(label: "SyncJournal.writer")
        barrierQueue = DispatchQueue(label: "SyncJournal.writer.barrier")
        state = Mutex(State(header: header, fd: fd, nextSequence: nextSequence, endOffset: endOffset,
                            durableEnd: endOffset, allocatedEnd: max(endOffset, allocatedEnd), unclaimedRecords: unclaimedRecords))
    }

    deinit {
        let closed = state.withLock { $0.closed }
        if !closed {
            try? io.system.close(fd)
            try? io.system.close(lockFD)
            LockRegistry.release(lockKey)
        }
    }

    /// The sequence number the next appended record will get.
    package var nextSequence: UInt64 { state.withLock { $0.nextSequence } }

    /// Bytes in the file up to the end of the last record written.
    package var endOffset: Int64 { state.withLock { $0.endOffset } }

    /// How many `fdatasync` calls the writer has issued (for group-commit measurements).
    package var syncCount: Int { state.withLock { $0.syncCount } }
}

/// Milliseconds since the Unix epoch from the system clock (used only for the
/// informational creation time in headers).
func wallClockMilliseconds() -> Int64 { SystemClock.wallClockMilliseconds() }

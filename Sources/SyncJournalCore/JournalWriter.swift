#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

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
    /// How appends reach the disk.
    package enum Mode: Sendable, Hashable {
        /// Each append is written and `fdatasync`ed on its own before it returns.
        case durable
        /// Concurrent appends share one write and one `fdatasync`; each still
        /// returns only once its own record is durable.
        case groupCommit
        /// Appends are buffered and written in large writes without syncing;
        /// nothing is durable until ``JournalWriter/sync()`` or
        /// ``JournalWriter/close()`` returns. A write error is final here (the
        /// buffered records already have sequence numbers) and surfaces at the
        /// next call. For tests and imports.
        case bulk
    }

    /// Options for ``JournalWriter/open(path:options:)``.
    package struct Options: Sendable {
        /// How appends reach the disk.
        package var mode: Mode
        /// The system-call layer (a fault injector in tests).
        package var system: any SystemCalls
        /// Create the journal if it does not exist.
        package var createIfMissing: Bool
        /// The header to use when creating (tests and samples fix ids and times).
        package var headerForNewJournal: (@Sendable () -> JournalHeader)?
        /// Called with each valid record, in order, by the scan that opening
        /// does anyway, so a caller that rebuilds state from the journal does
        /// not read the file a second time. (A corrupt journal still fails the
        /// open after some records were visited.)
        package var visitRecord: (@Sendable (JournalRecord) -> Void)?
        /// How far ahead of its appends the writer extends the file with
        /// zeros, in bytes (0: never; the file grows with each write).
        ///
        /// An append into space that is already allocated and written leaves
        /// the file's size alone, so its `fdatasync` flushes data only and
        /// skips the file system's metadata journal: on ext4 that made a
        /// durable append about 1.4 times as fast (`journal-bench`). Readers
        /// take a zero-filled tail for the clean end of the journal, and
        /// ``JournalWriter/close()`` cuts it off.
        ///
        /// ```swift
        /// var options = JournalWriter.Options()
        /// options.preallocationBytes = 4 << 20   // extend 4 MiB at a time
        /// ```
        package var preallocationBytes: Int
        /// Whether the caller understands a record type that is not
        /// skippable. A journal holding a verified record of a type it does
        /// not understand (or with reserved bits set) was written by a newer
        /// version: opening it fails with
        /// ``JournalError/unsupported(path:offset:reason:)`` and nothing is
        /// cut or appended. `nil`: every type is understood.
        package var understands: (@Sendable (RecordType) -> Bool)?

        /// Default options: durable appends, real system calls, create if
        /// missing, 1 MiB of preallocated space at a time.
        package init(mode: Mode = .durable, system: any SystemCalls = PosixSystemCalls(), createIfMissing: Bool = true,
                    headerForNewJournal: (@Sendable () -> JournalHeader)? = nil,
                    visitRecord: (@Sendable (JournalRecord) -> Void)? = nil,
                    preallocationBytes: Int = 1 << 20,
                    understands: (@Sendable (RecordType) -> Bool)? = nil) {
            self.mode = mode
            self.system = system
            self.createIfMissing = createIfMissing
            self.headerForNewJournal = headerForNewJournal
            self.visitRecord = visitRecord
            self.preallocationBytes = max(0, preallocationBytes)
            self.understands = understands
        }
    }

    /// The journal's path.
    package let path: String
    /// The current file's header (a checkpoint rewrite gives the journal a new one).
    package var header: JournalHeader { state.withLock { $0.header } }
    /// What opening found and repaired.
    package let recovery: JournalRecovery
    /// The append mode.
    package let mode: Mode

    private let io: FileIO
    private let preallocationBytes: Int
    /// The most bytes the writer ever has written past the durable end: the
    /// header's in-flight limit (the default for a 1.x journal, and kept by
    /// a checkpoint, so it never changes while the writer is open).
    let inFlightLimit: Int
    private let lockFD: FileDescriptor
    private let lockKey: String
    /// The open journal file. Changed only on the writer's queue (by a rewrite).
    private var fd: FileDescriptor { state.withLock { $0.fd } }
    private let queue: DispatchQueue
    private let state: Mutex<State>

    /// One caller's records, written contiguously; the continuation gets the
    /// first record's sequence number.
    private struct Pending {
        var records: [(type: RecordType, payload: [UInt8])]
        var continuation: CheckedContinuation<Result<UInt64, JournalError>, Never>
        var byteCount: Int { records.reduce(0) { $0 + $1.payload.count + JournalFormat.recordHeaderLength } }
    }

    private struct State {
        var header: JournalHeader
        var fd: FileDescriptor
        var pending: [Pending] = []
        var drainScheduled = false
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
        /// leaves the file exactly as it found it (torn tail aside).
        var unclaimedRecords: Bool
        /// Whether bytes were written since the last successful sync (bulk mode).
        var unsynced = false
        /// Bulk mode: encoded records not yet written, and whether a flush is queued.
        var buffer: [UInt8] = []
        var flushScheduled = false
        var syncCount = 0
    }

    private init(path: String, header: JournalHeader, recovery: JournalRecovery, mode: Mode, io: FileIO,
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

    /// Opens (and if needed creates) the journal at `path` for appending.
    ///
    /// - Throws: ``JournalError/locked(path:)`` if another writer has it open;
    ///   ``JournalError/corrupt(path:offset:damage:)`` (file untouched) if it is
    ///   corrupt; ``JournalError/notAJournal(path:)``,
    ///   ``JournalError/unsupportedVersion(path:major:minor:)``, ``JournalError/io(_:)``.
    package static func open(path: String, options: Options = Options()) async throws(JournalError) -> JournalWriter {
        try await BlockingIO.run { () throws(JournalError) -> JournalWriter in try openBlocking(path: path, options: options) }
    }

    /// The blocking body of ``open(path:options:)``.
    static func openBlocking(path: String, options: Options) throws(JournalError) -> JournalWriter {
        let io = FileIO(options.system)
        let system = options.system
        let lockPath = path + ".lock"
        let lockFD: FileDescriptor
        do { lockFD = try system.open(lockPath, [.readWrite, .create], 0o600) } catch { throw .io(error.at(lockPath)) }
        // Within this process the registry excludes a second writer; across
        // processes the file lock does.
        let namespace = system.lockNamespace
        let key = namespace.isEmpty ? LockRegistry.key(for: lockPath) : namespace + lockPath
        guard LockRegistry.claim(key) else {
            try? system.close(lockFD)
            throw .locked(path: path)
        }
        do {
            try system.lockExclusive(lockFD)
        } catch {
            try? system.close(lockFD)
            LockRegistry.release(key)
            if error.errno == 11 /* EAGAIN */ || error.errno == 13 /* EACCES */ { throw .locked(path: path) }
            throw .io(error.at(lockPath))
        }
        do {
            return try openLocked(path: path, options: options, io: io, lockFD: lockFD, lockKey: key)
        } catch {
            try? system.close(lockFD)
            LockRegistry.release(key)
            throw error
        }
    }

    private static func openLocked(path: String, options: Options, io: FileIO, lockFD: FileDescriptor, lockKey: String) throws(JournalError) -> JournalWriter {
        let system = options.system
        var created = false
        var fd: FileDescriptor
        do {
            fd = try system.open(path, .readWrite, 0)
        } catch where error.errno == 2 /* ENOENT */ && options.createIfMissing {
            let header = options.headerForNewJournal?() ?? JournalHeader(
                journalID: .random(), generation: JournalHeader.randomGeneration(),
                createdAtMilliseconds: wallClockMilliseconds())
            try create(path: path, header: header, io: io)
            created = true
            do { fd = try system.open(path, .readWrite, 0) } catch { throw .io(error.at(path)) }
        } catch {
            throw .io(error.at(path))
        }
        do {
            let report: JournalScanReport
            do {
                var scanner = try JournalScanner(io: io, fd: fd, path: path, understands: options.understands)
                report = try scanner.run { record in options.visitRecord?(record) }
            } catch let error as JournalError {
                throw error
            } catch let error as SystemError {
                throw JournalError.io(error.at(path))
            } catch {
                throw JournalError.io(SystemError(call: .pread, errno: 5, path: path))
            }
            var bytesCut: Int64 = 0
            var sideFile: String?
            var allocatedEnd = report.fileBytes
            switch report.status {
            case .clean:
                break
            case .corrupt(let offset, let damage):
                throw JournalError.corrupt(path: path, offset: offset, damage: damage)
            case .unsupported(let offset, let reason):
                throw JournalError.unsupported(path: path, offset: offset, reason: reason)
            case .tornTail(let offset, _):
                sideFile = try cutTornTail(path: path, fd: fd, at: offset, fileSize: report.fileBytes, io: io)
                bytesCut = report.fileBytes - offset
                allocatedEnd = offset
            }
            // The records found may still sit in the page cache of a process
            // that died: they become durable here, before any new record
            // claims them as its sync horizon.
            if !created && bytesCut == 0 && report.recordCount > 0 {
                do { try system.fdatasync(fd) } catch { throw JournalError.io(error.at(path)) }
            }
            guard let header = report.header else { throw JournalError.corrupt(path: path, offset: 0, damage: .checksumMismatch) }
            let recovery = JournalRecovery(statusFound: report.status, created: created, bytesCut: bytesCut,
                                           sideFile: sideFile, recordCount: report.recordCount)
            return JournalWriter(path: path, header: header, recovery: recovery, mode: options.mode, io: io,
                                 preallocationBytes: options.preallocationBytes, fd: fd, lockFD: lockFD, lockKey: lockKey,
                                 nextSequence: report.nextSequence, endOffset: report.validBytes, allocatedEnd: allocatedEnd,
                                 unclaimedRecords: false)
        } catch let error as JournalError {
            try? system.close(fd)
            throw error
        } catch {
            try? system.close(fd)
            throw JournalError.io(SystemError(call: .pread, errno: 5, path: path))
        }
    }

    /// Writes a new journal atomically: header into `<path>.creating`, fsync,
    /// rename, fsync of the directory. Permissions 0600.
    static func create(path: String, header: JournalHeader, io: FileIO) throws(JournalError) {
        let system = io.system
        let temporary = path + ".creating"
        let fd: FileDescriptor
        do { fd = try system.open(temporary, [.readWrite, .create, .truncate], 0o600) } catch { throw .io(error.at(temporary)) }
        do throws(SystemError) {
            try io.writeAll(fd, header.encoded(), at: 0, path: temporary)
            do { try system.fsync(fd) } catch { throw error.at(temporary) }
            do { try system.close(fd) } catch { throw error.at(temporary) }
        } catch {
            try? system.close(fd)
            try? system.unlink(temporary)
            throw .io(error)
        }
        do throws(SystemError) {
            try system.rename(temporary, path)
            try io.syncDirectory(FileIO.directory(of: path))
        } catch {
            throw .io(error)
        }
    }

    /// Moves the bytes of a torn tail to a side file, truncates the journal
    /// at the cut, and syncs both before anything else is appended.
    private static func cutTornTail(path: String, fd: FileDescriptor, at offset: Int64, fileSize: Int64, io: FileIO) throws(JournalError) -> String {
        let system = io.system
        var side = "\(path).torn-\(offset)"
        var attempt = 1
        var sideFD: FileDescriptor
        while true {
            do {
                sideFD = try system.open(side, [.readWrite, .create, .exclusive], 0o600)
                break
            } catch where error.errno == 17 /* EEXIST */ && attempt < 1000 {
                attempt += 1
                side = "\(path).torn-\(offset)-\(attempt)"
            } catch {
                throw .io(error.at(side))
            }
        }
        do throws(SystemError) {
            var at = offset
            while at < fileSize {
                let chunk = try io.read(fd, count: Int(min(Int64(FileWindow.chunk), fileSize - at)), at: at, path: path)
                if chunk.isEmpty { break }
                try io.writeAll(sideFD, chunk, at: at - offset, path: side)
                at += Int64(chunk.count)
            }
            do { try system.fsync(sideFD) } catch { throw error.at(side) }
            try? system.close(sideFD)
            try io.syncDirectory(FileIO.directory(of: path))
            do { try system.ftruncate(fd, offset) } catch { throw error.at(path) }
            do { try system.fsync(fd) } catch { throw error.at(path) }
        } catch {
            try? system.close(sideFD)
            throw .io(error)
        }
        return side
    }

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

    /// Bulk mode: encodes the record into the buffer and returns at once; the
    /// writer's queue writes the buffer once it passes ``bulkFlushThreshold``.
    private func appendBuffered(type: RecordType, payload: [UInt8]) throws(JournalError) -> UInt64 {
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
    private func flushBuffer() throws(JournalError) {
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
                preallocate(through: at + Int64(chunk.count))
                try io.writeAll(fd, Array(bytes[chunk]), at: at, path: path)
            } catch {
                if (try? io.system.ftruncate(fd, at)) != nil { state.withLock { $0.allocatedEnd = at } }
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
    private func syncOrFail() throws(JournalError) {
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

    /// Writes pending appends, one at a time or all together in group-commit
    /// mode, on the writer's queue.
    private func drain() {
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
                preallocate(through: offset + Int64(bytes.count))
                try io.writeAll(fd, bytes, at: offset, path: path)
            } catch {
                // Nothing was appended: cut any partial bytes so the next
                // record starts at the same boundary, and make the cut
                // durable before anything is written there again, so a power
                // cut can never mix the failed write's records with the next
                // ones. If either fails the file's end is unknown, so the
                // writer stops (a failed sync is never retried).
                var failure = JournalError.io(error)
                do {
                    try io.system.ftruncate(fd, offset)
                    state.withLock { $0.allocatedEnd = offset }
                    try io.system.fdatasync(fd)
                } catch {
                    let stop = JournalError.writerFailed(path: path, cause: error.at(path))
                    state.withLock { $0.failure = stop }
                    failure = stop
                }
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

    /// Zeros written once, the source of every preallocation write.
    private static let zeros = [UInt8](repeating: 0, count: 64 << 10)

    /// Extends the file with zeros past `end` when the append about to be
    /// written there would leave the preallocated space (on the writer's
    /// queue): up to the next multiple of ``Options/preallocationBytes``
    /// beyond `end`. The zeros become durable with the `fdatasync` that
    /// follows the append, the one sync per extension that still changes the
    /// file's size.
    ///
    /// Preallocation only ever saves time, so it never fails an append: when
    /// the disk is too full for the zeros (or a write of them fails) it stops
    /// where it got to, and the append itself reports whatever the disk says.
    private func preallocate(through end: Int64) {
        guard preallocationBytes > 0 else { return }
        let allocated = state.withLock { $0.allocatedEnd }
        guard end > allocated else { return }
        let step = Int64(preallocationBytes)
        let target = (end / step + 1) * step
        var at = allocated
        while at < target {
            let count = Int(min(Int64(Self.zeros.count), target - at))
            do throws(SystemError) {
                try io.writeAll(fd, count == Self.zeros.count ? Self.zeros : [UInt8](repeating: 0, count: count), at: at, path: path)
            } catch { break }
            at += Int64(count)
        }
        state.withLock { $0.allocatedEnd = max($0.allocatedEnd, at) }
    }

    private func drainStopped() {
        let waiting = state.withLock { state -> [Pending] in
            state.drainScheduled = false
            let waiting = state.pending
            state.pending = []
            return waiting
        }
        let failure = state.withLock { $0.failure } ?? .closed(path: path)
        for request in waiting { request.continuation.resume(returning: .failure(failure)) }
    }

    /// Replaces the journal with a new file of the next generation holding
    /// `records` (a checkpoint): syncs the current file, writes the new one
    /// under `<path>.checkpoint`, `fsync`s it, renames it into place and
    /// `fsync`s the directory; only the rename removes the old file. A crash at
    /// any step leaves either the old journal or the new one, each complete.
    ///
    /// The new header keeps the journal id, names the generation it
    /// continues, and starts at the next sequence number, so numbering stays
    /// gapless across the rewrite. Returns the first record's sequence number.
    ///
    /// A failure before the rename leaves the old journal in use (the
    /// temporary file is removed); a failure after it is final, like a failed
    /// `fdatasync`: the writer cannot know which file a crash would leave.
    @discardableResult
    package func rewrite(records: [(type: RecordType, payload: [UInt8])]) async throws(JournalError) -> UInt64 {
        for record in records where record.payload.count > JournalFormat.maximumPayloadLength {
            throw .recordTooLarge(bytes: record.payload.count, maximum: JournalFormat.maximumPayloadLength)
        }
        return try await BlockingIO.run(on: queue) { () throws(JournalError) -> UInt64 in
            try self.state.withLock { (state) throws(JournalError) in
                if let failure = state.failure { throw failure }
                if state.closed { throw .closed(path: self.path) }
            }
            try self.flushBuffer()
            if self.state.withLock({ $0.unsynced }) { try self.syncOrFail() }
            let (old, firstSequence) = self.state.withLock { ($0.header, $0.nextSequence) }
            // A checkpoint is always written in the current format: this is
            // how a 1.x journal moves to format 2.
            let header = JournalHeader(journalID: old.journalID, generation: JournalHeader.randomGeneration(),
                                       continuesGeneration: old.generation, firstSequence: firstSequence,
                                       createdAtMilliseconds: wallClockMilliseconds(),
                                       inFlightLimit: UInt32(self.inFlightLimit))
            var bytes = header.encoded()
            // Sized once: a checkpoint of a large state is hundreds of megabytes,
            // and growing by doubling copied it over and over.
            bytes.reserveCapacity(bytes.count + records.reduce(0) { $0 + JournalFormat.recordHeaderLength + $1.payload.count })
            var sequence = firstSequence
            // The file appears under the journal's name only once complete
            // and synced, so its records claim nothing beyond the header.
            let horizon = Int64(header.headerLength)
            for record in records {
                RecordFrame.encode(type: record.type, header: header, sequence: sequence, horizon: horizon,
                                   payload: record.payload, into: &bytes)
                sequence += 1
            }
            let system = self.io.system
            let temporary = self.path + ".checkpoint"
            let newFD: FileDescriptor
            do throws(SystemError) { newFD = try system.open(temporary, [.readWrite, .create, .truncate], 0o600) } catch { throw .io(error.at(temporary)) }
            do throws(SystemError) {
                try self.io.writeAll(newFD, bytes, at: 0, path: temporary)
                do throws(SystemError) { try system.fsync(newFD) } catch { throw error.at(temporary) }
                try system.rename(temporary, self.path)
            } catch {
                try? system.close(newFD)
                try? system.unlink(temporary)
                throw .io(error)
            }
            // The new file has the journal's name now; from here on a failure is final.
            let oldFD = self.fd
            self.state.withLock {
                $0.fd = newFD
                $0.header = header
                $0.nextSequence = sequence
                $0.endOffset = Int64(bytes.count)
                $0.durableEnd = Int64(bytes.count)
                $0.allocatedEnd = Int64(bytes.count)
                $0.unclaimedRecords = !records.isEmpty
                $0.unsynced = false
            }
            try? system.close(oldFD)
            do throws(SystemError) { try self.io.syncDirectory(FileIO.directory(of: self.path)) } catch {
                let failure = JournalError.writerFailed(path: self.path, cause: error)
                self.state.withLock { $0.failure = failure }
                throw failure
            }
            return firstSequence
        }
    }

    /// Format 2, bulk mode: appends and syncs an empty
    /// ``RecordType/syncHorizon`` record whose horizon covers every record
    /// written so far, when some are not covered yet (on the writer's queue,
    /// after the last sync).
    ///
    /// Only bulk mode needs it: its records carry the horizon of the last
    /// sync before they were buffered, so a whole import could otherwise end
    /// unclaimed. In durable and group-commit modes each batch claims the one
    /// before it, and at most the last batch is left unclaimed.
    ///
    /// The records are durable already; this only lets a reader prove it.
    /// So a write that fails (a full disk) is cut back and ignored. A failed
    /// sync still fails the close: it is never retried, and the record it
    /// covered may be torn, which the next open cuts.
    private func claimDurableRecords() throws(JournalError) {
        let (header, unclaimed, offset, sequence, horizon) = state.withLock {
            ($0.header, $0.unclaimedRecords, $0.endOffset, $0.nextSequence, $0.durableEnd)
        }
        guard mode == .bulk, header.hasSyncHorizons, unclaimed, horizon == offset else { return }
        var bytes: [UInt8] = []
        RecordFrame.encode(type: .syncHorizon, header: header, sequence: sequence, horizon: horizon, payload: [], into: &bytes)
        do {
            preallocate(through: offset + Int64(bytes.count))
            try io.writeAll(fd, bytes, at: offset, path: path)
        } catch {
            if (try? io.system.ftruncate(fd, offset)) != nil { state.withLock { $0.allocatedEnd = offset } }
            return
        }
        state.withLock {
            $0.endOffset = offset + Int64(bytes.count)
            $0.nextSequence = sequence + 1
            $0.unsynced = true
            $0.unclaimedRecords = false
        }
        try syncOrFail()
    }

    /// Waits for pending appends, syncs anything unsynced (unless the writer
    /// failed), releases the lock and closes the file. Later calls throw
    /// ``JournalError/closed(path:)``.
    package func close() async throws(JournalError) {
        // Refuse new appends at once. Every append accepted before this point
        // has its drain queued ahead of the block below (it was scheduled under
        // the same lock), and the queue is serial, so it is written first.
        let first = state.withLock { state -> Bool in
            if state.closed { return false }
            state.closed = true
            return true
        }
        guard first else { return }
        try await BlockingIO.run(on: queue) { () throws(JournalError) in
            var syncError: JournalError?
            // After a failed sync there is nothing to flush: the failure was
            // reported to every caller it concerned.
            if self.state.withLock({ $0.failure }) == nil {
                do throws(JournalError) {
                    try self.flushBuffer()
                    if self.state.withLock({ $0.unsynced }) { try self.syncOrFail() }
                    try self.claimDurableRecords()
                } catch { syncError = error }
            }
            // A closed journal carries no preallocated zeros. The cut need not
            // be durable: if a crash undoes it, readers take the zeros for
            // the clean end all the same.
            let (end, allocated, failed) = self.state.withLock { ($0.endOffset, $0.allocatedEnd, $0.failure != nil) }
            if !failed && syncError == nil && allocated > end { try? self.io.system.ftruncate(self.fd, end) }
            try? self.io.system.close(self.fd)
            try? self.io.system.close(self.lockFD)
            LockRegistry.release(self.lockKey)
            if let syncError { throw syncError }
        }
    }
}

/// Milliseconds since the Unix epoch from the system clock (used only for the
/// informational creation time in headers).
func wallClockMilliseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
}

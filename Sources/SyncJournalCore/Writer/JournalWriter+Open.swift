import Dispatch
import SyncJournalPlatform

extension JournalWriter {
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
        let lockPath = JournalFiles(journal: path).lock
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
            if error.code == .wouldBlock || error.code == .accessDenied { throw .locked(path: path) }
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

    static func openLocked(path: String, options: Options, io: FileIO, lockFD: FileDescriptor, lockKey: String) throws(JournalError) -> JournalWriter {
        let system = options.system
        var created = false
        var leftover: JournalCheckpointLeftover?
        var fd: FileDescriptor
        do {
            fd = try system.open(path, .readWrite, 0)
        } catch where error.code == .noSuchFile && Self.exists(JournalFiles(journal: path).checkpoint, system: system) {
            // A checkpoint whose rename was lost may be the only copy of the
            // data: a new empty journal here, and its next checkpoint, would
            // destroy it. A complete one takes the journal's place, as the
            // rename would have done; anything less is left to a person.
            let checkpoint = JournalFiles(journal: path).checkpoint
            guard JournalCheckpointLeftover.isComplete(checkpoint, system: system) else {
                throw .missingBesideCheckpoint(path: path, checkpoint: checkpoint)
            }
            do throws(SystemError) {
                try system.rename(checkpoint, path)
                try io.syncDirectory(FileIO.directory(of: path))
                fd = try system.open(path, .readWrite, 0)
            } catch {
                throw .io(error.at(path))
            }
            leftover = .adopted(from: checkpoint)
        } catch where error.code == .noSuchFile && options.createIfMissing {
            let header = options.headerForNewJournal?() ?? JournalHeader(
                journalID: .random(), generation: JournalHeader.randomGeneration(),
                createdAtMilliseconds: wallClockMilliseconds(),
                minorVersion: JournalWriter.minorVersionForNewFiles(preallocationBytes: options.preallocationBytes))
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
                throw JournalError.io(SystemError(call: .pread, code: .ioError, path: path))
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
                // The records before the cut may still sit in the page cache
                // of a process that died: they become durable before the cut
                // gives the file an end that only synced data may have.
                do { try system.fdatasync(fd) } catch { throw JournalError.io(error.at(path)) }
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
            guard var header = report.header else { throw JournalError.corrupt(path: path, offset: 0, damage: .checksumMismatch) }
            // Before anything writes `<journal>.checkpoint` again (the move to
            // format 2 below, a checkpoint later), a leftover there is
            // removed if redundant and kept under another name if not.
            if leftover == nil {
                leftover = try JournalCheckpointLeftover.settle(beside: path, journal: header, nextSequence: report.nextSequence, io: io)
            }
            var nextSequence = report.nextSequence
            var endOffset = report.validBytes
            // A journal found on disk: its records are claimed already (a
            // closing record, or the open's sync above before any new one).
            let unclaimedRecords = false
            // A 1.x journal found on disk moves to the current format before
            // anything is appended (FORMAT.md 3.4); one this open created
            // keeps the format it was asked for (tools write 1.x samples).
            if !header.hasSyncHorizons && !created && !options.defersFormatMove {
                let moved = try moveToCurrentFormat(path: path, fd: fd, header: header, understands: options.understands, io: io)
                // The replaced file: its name is the new file's now.
                try? system.close(fd)
                fd = moved.fd
                do { try io.syncDirectory(FileIO.directory(of: path)) } catch { throw JournalError.io(error) }
                header = moved.header
                endOffset = moved.endOffset
                allocatedEnd = moved.endOffset
                nextSequence = moved.nextSequence
            }
            let recovery = JournalRecovery(statusFound: report.status, created: created, bytesCut: bytesCut,
                                           sideFile: sideFile, recordCount: report.recordCount, checkpointLeftover: leftover)
            return JournalWriter(path: path, header: header, recovery: recovery, mode: options.mode, io: io,
                                 preallocationBytes: options.preallocationBytes, fd: fd, lockFD: lockFD, lockKey: lockKey,
                                 nextSequence: nextSequence, endOffset: endOffset, allocatedEnd: allocatedEnd,
                                 unclaimedRecords: unclaimedRecords)
        } catch let error as JournalError {
            try? system.close(fd)
            throw error
        } catch {
            try? system.close(fd)
            throw JournalError.io(SystemError(call: .pread, code: .ioError, path: path))
        }
    }

    /// Whether a file exists at `path` (it opens for reading).
    static func exists(_ path: String, system: any SystemCalls) -> Bool {
        guard let fd = try? system.open(path, .readOnly, 0) else { return false }
        try? system.close(fd)
        return true
    }

    /// Writes a new journal atomically: header into `<path>.creating`, fsync,
    /// rename, fsync of the directory. Permissions 0600.
    static func create(path: String, header: JournalHeader, io: FileIO) throws(JournalError) {
        let system = io.system
        let temporary = JournalFiles(journal: path).creating
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

    /// Saves the non-zero bytes of a torn tail to a side file
    /// (``TornTailFile``), truncates the journal at the cut, and syncs both
    /// before anything else is appended. Once the new side file is durable,
    /// side files beyond the newest ``TornTailFile/kept`` are removed.
    static func cutTornTail(path: String, fd: FileDescriptor, at offset: Int64, fileSize: Int64, io: FileIO) throws(JournalError) -> String {
        let system = io.system
        let files = JournalFiles(journal: path)
        let number = TornTailFile.nextNumber(of: path, io: io)
        var side = files.tornTail(at: offset, attempt: 1)
        var attempt = 1
        var sideFD: FileDescriptor
        while true {
            do {
                sideFD = try system.open(side, [.readWrite, .create, .exclusive], 0o600)
                break
            } catch where error.code == .fileExists && attempt < 1000 {
                attempt += 1
                side = files.tornTail(at: offset, attempt: attempt)
            } catch {
                throw .io(error.at(side))
            }
        }
        do throws(SystemError) {
            try TornTailFile.write(journalFD: fd, journalPath: path, cut: offset, end: fileSize, number: number,
                                   to: sideFD, sidePath: side, io: io)
            do { try system.fsync(sideFD) } catch { throw error.at(side) }
            try? system.close(sideFD)
            try io.syncDirectory(FileIO.directory(of: path))
            do { try system.ftruncate(fd, offset) } catch { throw error.at(path) }
            do { try system.fsync(fd) } catch { throw error.at(path) }
        } catch {
            try? system.close(sideFD)
            throw .io(error)
        }
        TornTailFile.prune(journal: path, io: io)
        return side
    }
}

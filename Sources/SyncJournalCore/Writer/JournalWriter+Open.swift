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
        var fd: FileDescriptor
        do {
            fd = try system.open(path, .readWrite, 0)
        } catch where error.code == .noSuchFile && options.createIfMissing {
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
            throw JournalError.io(SystemError(call: .pread, code: .ioError, path: path))
        }
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

    /// Moves the bytes of a torn tail to a side file, truncates the journal
    /// at the cut, and syncs both before anything else is appended.
    static func cutTornTail(path: String, fd: FileDescriptor, at offset: Int64, fileSize: Int64, io: FileIO) throws(JournalError) -> String {
        let system = io.system
        let files = JournalFiles(journal: path)
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
}

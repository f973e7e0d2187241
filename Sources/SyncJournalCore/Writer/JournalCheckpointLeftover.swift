/// What an open found under `<journal>.checkpoint` (a replacement file whose
/// rename did not happen, or did not reach the disk) and what it did with it.
///
/// A leftover is removed only when it is proven to hold nothing the journal
/// lacks; anything else is kept under another name. A journal missing beside
/// a leftover is replaced by it only when the leftover proves it is complete.
package enum JournalCheckpointLeftover: Sendable, Hashable {
    /// The journal was missing; the leftover was complete (verified to its
    /// closing sync-horizon record) and was renamed into the journal's place.
    case adopted(from: String)
    /// The leftover held nothing the journal lacks (no record at all, or a
    /// header of this journal's id whose generation the journal holds or
    /// continues, from a sequence number the journal reaches) and was removed.
    case removedRedundant(path: String, bytes: Int64)
    /// Nothing proved the leftover redundant: it was renamed to `keptAs` and
    /// left for inspection (``JournalFiles/keptCheckpoint(attempt:)``).
    case kept(path: String, keptAs: String, reason: String)

    /// Whether a file found under `<journal>.checkpoint` is a complete
    /// replacement of the journal: a format-2 file that verifies clean and
    /// whose last record is a sync horizon claiming every byte before it
    /// (the closing record ``CheckpointFileWriter/finish()`` writes). A file
    /// cut anywhere before that record, or damaged, is not.
    static func isComplete(_ path: String, system: any SystemCalls) -> Bool {
        var last: JournalRecord?
        guard let report = try? JournalReader(path: path, system: system).scan({ last = $0 }),
              report.status == .clean, let header = report.header, header.hasSyncHorizons,
              let last, last.type == .syncHorizon, last.syncHorizon == last.offset else { return false }
        return true
    }

    /// Settles a leftover beside the journal at `path`, whose header is
    /// `journal` and whose next record gets `nextSequence`: removes it when
    /// redundant, keeps it under another name otherwise. `nil` when there is
    /// no leftover. Called under the writer's lock, before anything writes
    /// `<journal>.checkpoint` again.
    static func settle(beside path: String, journal: JournalHeader, nextSequence: UInt64,
                       io: FileIO) throws(JournalError) -> JournalCheckpointLeftover? {
        let system = io.system
        let files = JournalFiles(journal: path)
        let leftover = files.checkpoint
        let fd: FileDescriptor
        do { fd = try system.open(leftover, .readOnly, 0) } catch {
            if error.code == .noSuchFile { return nil }
            throw .io(error.at(leftover))
        }
        let proof: (redundant: Bool, bytes: Int64, reason: String)
        do throws(SystemError) {
            defer { try? system.close(fd) }
            proof = try redundancy(of: fd, path: leftover, journal: journal, nextSequence: nextSequence, io: io)
        } catch {
            throw .io(error.at(leftover))
        }
        do throws(SystemError) {
            if proof.redundant {
                try system.unlink(leftover)
                try io.syncDirectory(FileIO.directory(of: path))
                return .removedRedundant(path: leftover, bytes: proof.bytes)
            }
            var attempt = 1
            while JournalWriter.exists(files.keptCheckpoint(attempt: attempt), system: system) { attempt += 1 }
            let kept = files.keptCheckpoint(attempt: attempt)
            try system.rename(leftover, kept)
            try io.syncDirectory(FileIO.directory(of: path))
            return .kept(path: leftover, keptAs: kept, reason: proof.reason)
        } catch {
            throw .io(error)
        }
    }

    /// Whether the leftover open at `fd` holds nothing the journal lacks,
    /// with its size and, when it is not provably redundant, why.
    ///
    /// A checkpoint of this journal carries its id and names the
    /// generation it continues; it starts at the sequence number the journal
    /// had reached, and the journal synced every record before it was
    /// written. So one that continues the journal's generation from a
    /// sequence the journal reaches holds only a fold of the journal's own
    /// records. One of the journal's own generation, or of the generation
    /// the journal continues, was renamed into place already (the journal is
    /// it, or was built from it). A file too short for a header and a
    /// record, or with no non-zero byte, holds nothing.
    private static func redundancy(of fd: FileDescriptor, path: String, journal: JournalHeader, nextSequence: UInt64,
                                   io: FileIO) throws(SystemError) -> (redundant: Bool, bytes: Int64, reason: String) {
        let size = try io.system.fileSize(fd)
        // Too short to hold a header and a record: whatever its bytes, no
        // record is in it (a crash while the header was written).
        if size < Int64(JournalFormat.headerLength + JournalFormat.version1RecordHeaderLength) { return (true, size, "") }
        let start = try io.read(fd, count: JournalFormat.maximumHeaderLength, at: 0, path: path)
        if let header = try? JournalHeader.decode(start) {
            guard header.journalID == journal.journalID else {
                return (false, size, "it belongs to another journal (id \(header.journalID))")
            }
            if header.generation == journal.generation || header.generation == journal.continuesGeneration {
                return (true, size, "")
            }
            if header.continuesGeneration == journal.generation {
                if header.firstSequence <= nextSequence { return (true, size, "") }
                return (false, size, "it starts at sequence \(header.firstSequence), past the journal's last record \(nextSequence - 1)")
            }
            return (false, size, "its generation \(header.generation) is not one the journal holds or continues")
        }
        var offset: Int64 = 0
        while offset < size {
            let chunk = try io.read(fd, count: Int(min(1 << 20, size - offset)), at: offset, path: path)
            if chunk.isEmpty { break }
            if chunk.contains(where: { $0 != 0 }) {
                return (false, size, "its header does not verify and it holds non-zero bytes")
            }
            offset += Int64(chunk.count)
        }
        return (true, size, "")
    }
}

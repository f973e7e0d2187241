/// Errors of the journal core, each with the context needed to act on it.
public enum JournalError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A system call failed; the path, call and `errno` are in the `SystemError`.
    case io(SystemError)
    /// The file is not a SyncJournal file (wrong magic, or empty).
    case notAJournal(path: String)
    /// The file is a journal of a major version this code cannot read.
    case unsupportedVersion(path: String, major: UInt16, minor: UInt16)
    /// The journal is corrupt at `offset`; it was not modified.
    case corrupt(path: String, offset: Int64, damage: JournalDamage)
    /// The journal is intact, but at `offset` it holds something this version
    /// does not understand (written by a newer one): it is read-only here and
    /// was not modified.
    case unsupported(path: String, offset: Int64, reason: UnsupportedContent)
    /// Another writer, in this or another process, has the journal open.
    case locked(path: String)
    /// An `fdatasync` failed earlier; the writer accepts nothing more until
    /// the journal is reopened and recovered from what is on disk.
    case writerFailed(path: String, cause: SystemError)
    /// The writer was closed.
    case closed(path: String)
    /// A payload is larger than the format's maximum record size.
    case recordTooLarge(bytes: Int, maximum: Int)
    /// The destination of a salvage or a creation already exists.
    case alreadyExists(path: String)
    /// The journal is missing but its `.checkpoint` file is there: it may be
    /// the only copy of the data, so no empty journal is created beside it.
    case missingBesideCheckpoint(path: String, checkpoint: String)

    /// A one-line explanation for logs and tools: the journal's path, then ``reason``.
    public var description: String {
        journalPath.map { "\($0): \(reason)" } ?? reason
    }

    /// The journal (or salvage destination) the error is about; `nil` for an
    /// I/O error (its system error names the file) and an oversized record.
    package var journalPath: String? {
        switch self {
        case .io, .recordTooLarge: return nil
        case .notAJournal(let path), .unsupportedVersion(let path, _, _), .corrupt(let path, _, _), .unsupported(let path, _, _),
             .locked(let path), .writerFailed(let path, _), .closed(let path), .alreadyExists(let path),
             .missingBesideCheckpoint(let path, _):
            return path
        }
    }

    /// What went wrong, without the journal's path (for messages that name it once themselves).
    package var reason: String {
        switch self {
        case .io(let error): return "I/O error: \(error)"
        case .notAJournal: return "not a SyncJournal file"
        case .unsupportedVersion(_, let major, let minor): return "journal format \(major).\(minor) is not supported by this reader (it reads major versions 1 and 2)"
        case .corrupt(_, let offset, let damage): return "corrupt at offset \(offset): \(damage); the file was not modified (salvage it explicitly)"
        case .unsupported(_, let offset, let reason): return "read-only for this version: at offset \(offset), \(reason); the file was not modified"
        case .locked: return "another writer has this journal open"
        case .writerFailed(_, let cause): return "an earlier sync failed (\(cause)); reopen the journal to recover"
        case .closed: return "the journal writer is closed"
        case .recordTooLarge(let bytes, let maximum): return "record of \(bytes) bytes exceeds the maximum of \(maximum)"
        case .alreadyExists: return "already exists"
        case .missingBesideCheckpoint(_, let checkpoint): return "the journal is missing but \(checkpoint) exists (it may hold the only copy of the data); nothing was created"
        }
    }
}

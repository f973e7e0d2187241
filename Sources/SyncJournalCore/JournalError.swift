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

    /// A one-line explanation for logs and tools.
    public var description: String {
        switch self {
        case .io(let error): return "I/O error: \(error)"
        case .notAJournal(let path): return "\(path): not a SyncJournal file"
        case .unsupportedVersion(let path, let major, let minor): return "\(path): journal format \(major).\(minor) is not supported by this reader (it reads major versions 1 and 2)"
        case .corrupt(let path, let offset, let damage): return "\(path): corrupt at offset \(offset): \(damage); the file was not modified (salvage it explicitly)"
        case .unsupported(let path, let offset, let reason): return "\(path): read-only for this version: at offset \(offset), \(reason); the file was not modified"
        case .locked(let path): return "\(path): another writer has this journal open"
        case .writerFailed(let path, let cause): return "\(path): an earlier sync failed (\(cause)); reopen the journal to recover"
        case .closed(let path): return "\(path): the journal writer is closed"
        case .recordTooLarge(let bytes, let maximum): return "record of \(bytes) bytes exceeds the maximum of \(maximum)"
        case .alreadyExists(let path): return "\(path): already exists"
        }
    }
}

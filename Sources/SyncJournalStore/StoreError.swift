import SyncJournalCore
import SyncJournalProtocol

/// Errors of the local store, with what the app needs to act on them.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The entity kind is empty.
    case emptyKind
    /// The entity kind is longer than the protocol allows (128 UTF-8 bytes)
    /// or contains U+0000: no server would accept its records.
    case invalidKind(String, reason: String)
    /// The record id is empty or longer than 64 UTF-8 bytes.
    case invalidRecordID(String, reason: String)
    /// A field name is empty (or the record is too large to journal).
    case invalidFields(kind: String, id: String, reason: String)
    /// An edit states a model version outside 1 to
    /// `ProtocolLimits.maximumModelVersion` (the record's key and the version).
    case invalidModelVersion(RecordKey, version: Int)
    /// An update or delete names a record the app cannot see.
    case recordNotFound(RecordKey)
    /// A create names a record that already exists.
    case recordAlreadyExists(RecordKey)
    /// A change would not fit in one journal record.
    case tooLarge(bytes: Int, maximum: Int)
    /// A page of server data was refused before anything was kept.
    case invalidServerData(kind: String, index: Int, reason: String)
    /// The journal cannot be read (corrupt, not a journal, or written by a
    /// newer version); it was not modified. Salvage is explicit.
    case unreadable(path: String, reason: UnreadableReason)
    /// The store was retired (the app switched endpoint or account).
    case retired
    /// The store was closed.
    case closed
    /// The store was opened with ``LocalStore/Options/readOnly``: it reads,
    /// queries and observes the journal at `path` but never writes it, so
    /// edits, checkpoints and sync work are refused.
    case readOnly(path: String)
    /// The store is suspended (``LocalStore/suspend()``): its journal at
    /// `path` is closed and unlocked, so nothing is written until
    /// ``LocalStore/resume()``. Reads still answer from memory.
    case suspended(path: String)
    /// The journal refused the write; nothing changed in the store.
    case journal(JournalError)
    /// The journal at `path` could not be opened (its directory is missing,
    /// another store holds it, a system call failed); nothing was changed.
    case cannotOpen(path: String, cause: JournalError)
    /// The operation is not quarantined (or not queued), so it cannot be retried or discarded.
    case notQuarantined(OperationID)
    /// No conflict with this id is waiting.
    case conflictNotFound(OperationID)
    /// An edit names a shared space the device does not know the user to be
    /// a member of: never one, no longer one, or one not pulled yet.
    case noSuchSpace(SpaceID)
    /// An edit names a shared space where the user is a viewer.
    case readOnlySpace(SpaceID)
    /// An attachment's file could not be read or written (the call, errno and path say which).
    case attachmentFile(SystemError)
    /// An attachment's file on this device no longer hashes to its name:
    /// the disk damaged it. Reported, never repaired silently; the file is
    /// not sent nor shown.
    case attachmentDamaged(ContentHash, path: String)
    /// This device holds no file of the attachment.
    case attachmentMissing(ContentHash)
    /// An attachment cannot be made as asked (its media type, say).
    case invalidAttachment(reason: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .emptyKind: return "the entity kind is empty"
        case .invalidKind(let kind, let reason): return "invalid entity kind \"\(kind.prefix(32))\": \(reason)"
        case .invalidRecordID(let id, let reason): return "invalid record id \"\(id)\": \(reason)"
        case .invalidFields(let kind, let id, let reason): return "invalid fields for \(kind)/\(id): \(reason)"
        case .invalidModelVersion(let key, let version):
            return "invalid model version for \(key): \(ProtocolLimits.problem(modelVersion: version) ?? "\(version)")"
        case .recordNotFound(let key): return "no record \(key)"
        case .recordAlreadyExists(let key): return "record \(key) already exists"
        case .tooLarge(let bytes, let maximum): return "the change takes \(bytes) bytes, more than a journal record holds (\(maximum))"
        case .invalidServerData(let kind, let index, let reason): return "server data for \(kind) refused (row \(index)): \(reason); nothing was kept"
        case .unreadable(let path, let reason): return "\(path): stored data could not be read (\(reason)); it was kept as it is"
        case .retired: return "the store was retired"
        case .closed: return "the store is closed"
        case .readOnly(let path): return "\(path) is open read-only: nothing can be written to it"
        case .suspended(let path): return "the store of \(path) is suspended: nothing is written until it resumes"
        case .journal(let error): return "could not save: \(error)"
        case .cannotOpen(let path, let cause): return "cannot open the journal at \(path): \(Self.openFailure(path: path, cause))"
        case .notQuarantined(let id): return "operation \(id) is not quarantined"
        case .conflictNotFound(let id): return "no conflict \(id) is waiting"
        case .noSuchSpace(let space): return "the user is not a member of space \(space) (as far as this device has synced)"
        case .readOnlySpace(let space): return "a viewer of space \(space) cannot change its records"
        case .attachmentFile(let error): return "an attachment's file: \(error)"
        case .attachmentDamaged(let content, let path): return "the attachment file \(path) no longer hashes to \(content.hex): the disk damaged it"
        case .attachmentMissing(let content): return "no file of attachment \(content.hex) on this device"
        case .invalidAttachment(let reason): return reason
        }
    }

    /// Why opening the journal at `path` failed, in words that do not repeat the path.
    private static func openFailure(path: String, _ cause: JournalError) -> String {
        let directory = path.lastIndex(of: "/").map { path[..<$0].isEmpty ? "/" : String(path[..<$0]) } ?? "."
        switch cause {
        case .io(let error) where error.code == .noSuchFile && error.path == path:
            // Only read-only opening and resuming look for the journal without creating it.
            return "there is no journal file, and a read-only or resuming store never creates one (\(error.code))"
        case .io(let error) where error.code == .readOnlyFileSystem:
            return "\(directory) is on a read-only file system; open the store with `readOnly` to read the journal (\(error.code))"
        case .io(let error) where error.code == .accessDenied && error.call == .open && error.path != path:
            return "\(directory) is read-only for this process (the writer's lock file cannot be created there); "
                + "open the store with `readOnly` to read the journal (\(error.code))"
        case .io(let error) where error.code == .noSuchFile:
            return "the directory \(directory) does not exist (\(error.code))"
        case .io(let error) where error.code == .accessDenied:
            return "no permission to create or open files in \(directory) (\(error.code))"
        case .io(let error):
            return "\(error.call.rawValue) failed: \(error.message) (\(error.code))"
        case .locked:
            return "another store, in this or another process, has it open"
        default:
            return cause.reason
        }
    }
}

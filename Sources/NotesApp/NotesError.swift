import SyncJournal

/// Why a `notes` command failed, with the one line it prints and its exit status.
public enum NotesError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No note with this id is visible on this device.
    case noteNotFound(id: String)
    /// A note is stored in a shape this version cannot read, or cannot be written as a record.
    case noteUnreadable(String)
    /// Another process (another `notes`) holds the device's journal.
    case journalLocked(directory: String)
    /// The device directory cannot be created or used.
    case directoryUnusable(directory: String, reason: String)
    /// The journal cannot be read (damaged, or written by a newer version); it was left as it is.
    case journalUnreadable(directory: String, reason: String)
    /// The server could not be reached or asked to come back later.
    case serverUnreachable(server: String, reason: String)
    /// The server answered, but the sync did not succeed (credentials refused, a reply it could not use).
    case syncFailed(server: String, reason: String)
    /// The server is not the one this device synced with, or it went back in
    /// time (restored from a backup): nothing was sent, every note is kept,
    /// and syncing waits for `notes reconcile`.
    case serverChanged(server: String, mismatch: ServerMismatch)
    /// The command exists only from a later model version of the app (pinning
    /// came with version 2).
    case needsModelVersion(command: String, version: NotesModelVersion)
    /// No shared space this device knows (or the server listed) has this name or id.
    case noSuchSpace(String)
    /// More than one of the user's shared spaces has this name: name one by its id.
    case ambiguousSpace(name: String, ids: [SpaceID])
    /// The server refused a change of a shared space: the user is not an
    /// owner, the user named is unknown, the last owner would leave.
    case spaceRefused(server: String, refusal: SpaceRefusal)
    /// The note has no attachment of this name.
    case noSuchAttachment(id: String, name: String)
    /// The attachment is not on this device, and no `--server` was given to download it from.
    case attachmentNotHere(id: String, name: String)
    /// The store refused the change or the read.
    case store(StoreError)

    /// The line printed on standard error, after `notes: `.
    public var description: String {
        switch self {
        case .noteNotFound(let id): return "no note \(id) on this device"
        case .noteUnreadable(let report): return "cannot read or write the note: \(report)"
        case .journalLocked(let directory): return "\(directory) is in use by another notes process (its journal is locked)"
        case .directoryUnusable(let directory, let reason): return "cannot use \(directory): \(reason)"
        case .journalUnreadable(let directory, let reason): return "the journal in \(directory) cannot be read (\(reason)); it was left as it is"
        case .serverUnreachable(let server, let reason): return "cannot reach the server at \(server): \(reason)"
        case .syncFailed(let server, let reason): return "sync with \(server) failed: \(reason)"
        case .serverChanged(let server, let mismatch):
            return "the server at \(server) changed: \(mismatch); every note is kept; run notes reconcile to upload what it lacks"
        case .needsModelVersion(let command, let version):
            return "\(command) needs --model-version \(version.rawValue) or later (model \(NotesModelVersion.version1) has no pins)"
        case .noSuchSpace(let name): return "no shared space \"\(name)\" (notes space list shows yours)"
        case .ambiguousSpace(let name, let ids):
            return "\(ids.count) shared spaces are named \"\(name)\"; name one by its id: "
                + ids.map(\.description).joined(separator: ", ")
        case .spaceRefused(let server, let refusal): return "the server at \(server) refused: \(refusal)"
        case .noSuchAttachment(let id, let name): return "note \(id) has no attachment \"\(name)\""
        case .attachmentNotHere(let id, let name):
            return "attachment \"\(name)\" of note \(id) is not on this device; give --server to download it"
        case .store(let error): return error.description
        }
    }

    /// The exit status (BSD `sysexits` numbering where one fits).
    public var exitStatus: Int32 {
        switch self {
        case .noteNotFound, .noSuchSpace, .noSuchAttachment: return 1
        case .attachmentNotHere: return 69                  // EX_UNAVAILABLE: the server is needed
        case .ambiguousSpace: return 64                  // EX_USAGE: the command must name the space by id
        case .needsModelVersion: return 64               // EX_USAGE, as the parser's refusals
        case .journalUnreadable, .noteUnreadable: return 65        // EX_DATAERR
        case .serverUnreachable, .syncFailed: return 69   // EX_UNAVAILABLE
        case .serverChanged: return 76                    // EX_PROTOCOL: the server is not the one this device knew
        case .store(.noSuchSpace): return 1              // as a note that is not there
        case .spaceRefused, .store(.readOnlySpace): return 77   // EX_NOPERM: a viewer's edit, or a refused membership change
        case .directoryUnusable, .store: return 74       // EX_IOERR
        case .journalLocked: return 75            // EX_TEMPFAIL: try again once the other process ends
        }
    }
}

import SyncJournalProtocol
import SyncJournalCore

/// Why a store cannot read its journal, so the app can tell the user what to
/// do: salvage a corrupt journal, update the app for one a newer version
/// wrote, close the other copy of the app that holds it, or check the disk.
/// The journal is never modified in any of these cases.
public enum UnreadableReason: Sendable, Hashable, CustomStringConvertible {
    /// The journal is damaged beyond a torn tail (or is not a journal at all),
    /// at `offset` when the damage is at a place in the file (`nil`: the
    /// records are intact but do not make a store, say a checkpoint that
    /// never ends); `detail` says how. Salvage is the way out.
    case corrupt(offset: Int64?, detail: String)
    /// A newer version wrote the journal (a newer format, or records this
    /// version does not understand): it is read-only here; `detail` says what.
    case newerFormat(detail: String)
    /// Another writer, in this or another process, has the journal open.
    case locked(path: String)
    /// A system call failed; the call, `errno` and path are in the error.
    case io(SystemError)

    /// Classifies a journal error found while opening.
    package init(_ error: JournalError) {
        switch error {
        // The store's error names the path: the details do not repeat it.
        case .corrupt(_, let offset, _): self = .corrupt(offset: offset, detail: error.reason)
        case .notAJournal: self = .corrupt(offset: 0, detail: error.reason)
        case .unsupportedVersion, .unsupported: self = .newerFormat(detail: error.reason)
        case .locked(let path): self = .locked(path: path)
        case .io(let cause), .writerFailed(_, let cause): self = .io(cause)
        case .closed, .recordTooLarge, .alreadyExists, .missingBesideCheckpoint: self = .corrupt(offset: nil, detail: error.reason)
        }
    }

    /// Classifies a replay failure: the records verify but do not rebuild a store.
    package init(_ failure: Replayer.Failure) {
        switch failure {
        case .corrupt(let status): self = .corrupt(offset: status.damageOffset, detail: failure.description)
        case .unsupported: self = .newerFormat(detail: failure.description)
        case .undecodable, .incompleteCheckpoint, .misplacedCheckpoint, .inconsistent:
            self = .corrupt(offset: nil, detail: failure.description)
        }
    }

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .corrupt(_, let detail), .newerFormat(let detail): return detail
        case .locked: return JournalError.locked(path: "").reason
        case .io(let error): return JournalError.io(error).description
        }
    }
}

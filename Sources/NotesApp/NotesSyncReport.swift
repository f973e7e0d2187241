import Foundation
import SyncJournal

/// What a sync's outcome means to the user of `notes`.
enum NotesSyncReport {
    /// Returns when `outcome` is ok; throws the error the user sees otherwise.
    static func check(_ outcome: SyncOutcome, server: URL) throws(NotesError) {
        let name = server.absoluteString
        switch outcome {
        case .ok:
            return
        case .skipped(.offline):
            throw .serverUnreachable(server: name, reason: "nothing answered (offline); changes stay queued in the journal")
        case .retryLater(let reason, _):
            throw .serverUnreachable(server: name, reason: "\(reason); changes stay queued in the journal")
        case .failed(.serverMismatch(let mismatch)):
            throw .serverChanged(server: name, mismatch: mismatch)
        case .failed(let failure):
            throw .syncFailed(server: name, reason: failure.description)
        case .skipped(.suspended), .deadlineReached:
            throw .syncFailed(server: name, reason: "\(outcome); changes stay queued in the journal")
        }
    }
}

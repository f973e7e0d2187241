import Foundation
import SyncJournalSync

/// The error's one-line explanation, for `localizedDescription` and alerts.
extension SyncFailure: LocalizedError {
    /// The same text as `description`: what failed, naming the journal's path at most once.
    public var errorDescription: String? { description }
}

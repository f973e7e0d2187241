import Foundation
import SyncJournalProtocol

/// The error's one-line explanation, for `localizedDescription` and alerts.
extension TransportError: LocalizedError {
    /// The same text as `description`: what failed, naming the journal's path at most once.
    public var errorDescription: String? { description }

    /// What the app can do: for a changed server, run a reconciliation
    /// (`SyncEngine.reconcileWithServer()`); `nil` for other errors.
    public var recoverySuggestion: String? {
        if case .serverMismatch = self {
            return "Nothing was applied. Reconcile with the server to upload what it lacks and sync again."
        }
        return nil
    }
}

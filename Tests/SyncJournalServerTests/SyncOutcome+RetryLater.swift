import SyncJournalSync

extension SyncOutcome {
    /// Whether the sync stopped to be retried later (a transport failure).
    var isRetryLater: Bool { if case .retryLater = self { return true } else { return false } }
}

import SyncJournalProtocol

/// What the store kept of one push request's replies
/// (``LocalStore/endSending(_:outcomes:)``).
package struct SendingEnd: Sendable, Hashable {
    /// Conflicts among the outcomes.
    package var conflicts: Int
    /// Operations of the outcomes that are quarantined now: they wait for the
    /// app, not for a backoff.
    package var quarantined: Set<OperationID>

    /// The result of keeping one reply.
    package init(conflicts: Int, quarantined: Set<OperationID>) {
        self.conflicts = conflicts
        self.quarantined = quarantined
    }
}

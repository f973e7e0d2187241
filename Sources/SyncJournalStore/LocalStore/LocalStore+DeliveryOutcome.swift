import SyncJournalProtocol
extension LocalStore {
    /// What the server said of one operation, as the store keeps it.
    package enum DeliveryOutcome: Sendable, Hashable {
        /// Applied; the row is the server's copy afterwards.
        case acknowledged(ServerRow)
        /// Refused: the server's copy changed (`nil`: it was deleted).
        case conflicted(server: ServerRow?)
        /// Refused for a reason of this kind (``FailureKind/deletedOrNoAccess`` quarantines at once).
        case failure(FailureKind, reason: String)
        /// Refused for good by the user's role in the operation's shared
        /// space (a viewer, or no longer a member): it leaves the queue for
        /// ``LocalStore/rejections()`` with the server's reason, and whoever
        /// awaits it gets ``OperationOutcome/rejected(_:)``.
        case refused(reason: String)
    }
}

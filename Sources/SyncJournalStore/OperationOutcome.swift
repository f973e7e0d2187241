import SyncJournalProtocol

/// How one queued operation ended, as ``LocalStore/outcome(of:timeout:clock:)`` reports it.
public enum OperationOutcome: Sendable, Hashable {
    /// The server applied it; the row is its copy afterwards.
    case acknowledged(ServerRow)
    /// The server refused it because its copy changed; the record says what
    /// the policy did (a replacement, if any, is a new operation to await).
    case conflicted(ConflictRecord)
    /// The server's copy had changed, and the field-merging policy merged
    /// the operation into it losing nothing (``ConflictRecord/isMerge``);
    /// the merged fields are a new operation to await, if any differed.
    case merged(ConflictRecord)
    /// It failed permanently too often (or the row is gone) and waits for the
    /// app to retry or discard it.
    case quarantined(OutboxEntryStatus)
    /// It left the queue and will never reach the server: the server
    /// refused it for the user's role in its shared space (a viewer, or no
    /// longer a member), or the user's membership of the space ended. The
    /// record is kept in ``LocalStore/rejections()`` for the app to show.
    case rejected(RejectionRecord)
    /// It left the queue without reaching the server: a create and a delete
    /// that cancelled out, or the app discarded it.
    case cancelled
    /// Still queued: the timeout passed, or the waiting task was cancelled,
    /// before the operation had an outcome.
    case pending
    /// Not queued, and no outcome is remembered (the store keeps the last
    /// few thousand), or the store closed while waiting.
    case unknown
}

/// Something that changed in a store, for apps that observe it
/// (``LocalStore/changes()``).
public enum StoreChange: Sendable, Hashable {
    /// A local edit of this record was journaled.
    case edited(RecordKey)
    /// The server applied an operation.
    case acknowledged(OperationID, ServerRow)
    /// A conflict was found and resolved by the kind's policy.
    case conflict(ConflictRecord)
    /// An operation was merged into the server's changed copy, losing
    /// nothing (``ConflictRecord/isMerge``).
    case merged(ConflictRecord)
    /// An operation was quarantined.
    case quarantined(OutboxEntryStatus)
    /// The server refused an operation for good for the user's role in its
    /// shared space; it is in ``LocalStore/rejections()``. (Edits of a space
    /// whose membership ended are told once, by ``spaceLost(_:)``.)
    case rejected(RejectionRecord)
    /// Server rows of these kinds were pulled.
    case pulled(kinds: [String])
    /// The server described a shared space the user is a member of: new, renamed,
    /// or with other members or roles.
    case spaceDescribed(Space)
    /// The user is no longer a member of a shared space: its records left
    /// every query, and its queued edits became rejections.
    case spaceLost(SpaceID)
}

import SyncJournalCore
import SyncJournalProtocol

/// One record of a checkpoint: a checkpoint file starts with these, holding
/// the whole state, split so no record passes the maximum record size.
package enum CheckpointPart: Sendable, Hashable {
    /// Server rows of the snapshot.
    case rows([ServerRow])
    /// Queued operations, in queue order.
    case outbox([OutboxOperation])
    /// Pull cursors per kind.
    case cursors([String: PullCursor])
    /// *2.5* Where each kind's pull stopped in one shared space.
    case spaceCursors(SpaceID, [String: PullCursor])
    /// *2.5* The shared spaces the user is a member of.
    case spaces([Space])
    /// Conflicts waiting for the app.
    case conflicts([ConflictRecord])
    /// Base copies of rows with queued edits made on an older copy (1.1).
    case baseRows([ServerRow])
    /// What the device knows of its server (2.4): written when it knows an
    /// identity or a mismatch. Not counted in the end part.
    case server(KnownServer)
    /// Rejections waiting for the app.
    case rejections([RejectionRecord])
    /// The last part: the counts the parts must add up to, so an incomplete
    /// checkpoint is detected rather than replayed as a smaller state.
    case end(rows: Int, operations: Int, conflicts: Int, rejections: Int)
}

import SyncJournalProtocol

/// What an ``InMemoryStorage`` holds besides its clock, as a value: a copy
/// of the database a ``ReferenceServer`` can be restored to (time itself
/// never goes back, so the clock is not part of it).
struct InMemoryTables: Sendable {
    /// Every stored row, live or a tombstone, with its owner.
    var table: [RowAddress: OwnedRow] = [:]
    /// The largest stamp issued (`.min`: none yet).
    var lastIssued: Int64 = .min
    /// The largest stamp a pull handed out, or a horizon it moved a client to.
    var sealed: Int64 = .min
    /// Per kind, the position of the last tombstone purged in a personal space.
    var horizons: [String: PullCursor] = [:]
    /// The shared spaces, their members and horizons.
    var spaces: [SpaceID: InMemorySpace] = [:]
    /// The contents held, their uploaders and the unfinished uploads.
    var attachments = InMemoryAttachments()
}

import SyncJournalProtocol

/// One shared space as ``InMemoryStorage`` keeps it: its description, its
/// stamp counter and its members.
struct InMemorySpace: Sendable, Hashable {
    /// The name members see.
    var name: String
    /// The stamp of its last membership change, rename or creation.
    var version: Int64
    /// The last stamp drawn in it.
    var lastStamp: Int64
    /// Each member's role.
    var members: [String: SpaceRole]
    /// Per kind, the position of the last tombstone purged in it.
    var horizons: [String: PullCursor] = [:]
}

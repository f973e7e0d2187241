import SyncJournalProtocol

/// A copy of a ``ReferenceServer``'s database at one moment — its rows,
/// stamp counter, tombstone horizons, remembered operations and identity —
/// as a backup would keep it. Restoring it
/// (``ReferenceServer/restore(_:)``) puts the server back in time; restoring
/// another server's snapshot swaps that server's database in.
///
/// ```swift
/// let backup = await server.snapshot()
/// // ... devices sync more ...
/// await server.restore(backup)   // same identity, earlier state
/// ```
public struct ReferenceServerSnapshot: Sendable {
    /// The identity of the database copied (`nil`: a server without one).
    public let identity: ServerIdentity?
    /// The rows, stamp counter and horizons.
    let tables: InMemoryTables
    /// The remembered operations, per user.
    let remembered: [String: [OperationID: MutationResult]]
    /// When each remembered operation was applied, per user.
    let rememberedAt: [String: [OperationID: Int64]]
}

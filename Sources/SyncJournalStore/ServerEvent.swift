import SyncJournalProtocol

/// A change to what the device knows of its server, journaled as one
/// server record (`journals/FORMAT.md`, type `0x0104`).
package enum ServerEvent: Sendable, Hashable {
    /// The first reply carrying an identity: the device syncs with this server from now on.
    case learned(ServerIdentity)
    /// The server is not the one the device knows, or went back in time:
    /// sync stops until a reconciliation.
    case mismatched(ServerMismatch)
    /// A reconciliation finished: the device syncs with this server (`nil`:
    /// one without an identity) and has taken stamps up to `seenStamp`
    /// from it; the mismatch is cleared.
    case adopted(ServerIdentity?, seenStamp: Int64?)
}

/// What a sync status shows of the store, read in constant time: the
/// store keeps the counts as its state changes, so following the status
/// costs the same with a hundred thousand operations queued as with none.
package struct OutboxCounts: Sendable, Hashable {
    /// Queued operations that will be sent (not quarantined).
    package var pending: Int
    /// Queued operations held back after permanent failures.
    package var quarantined: Int
    /// Conflicts waiting for the app (merges that lost nothing excluded).
    package var conflicts: Int
    /// What the device knows of its server's identity and any mismatch.
    package var server: KnownServer

    package init(pending: Int, quarantined: Int, conflicts: Int, server: KnownServer) {
        self.pending = pending
        self.quarantined = quarantined
        self.conflicts = conflicts
        self.server = server
    }
}

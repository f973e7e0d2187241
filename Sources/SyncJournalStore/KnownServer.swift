import SyncJournalProtocol

/// What the device knows of the server it syncs with: the identity it
/// first synced with, the latest stamp it has taken from that server, and
/// a mismatch found and not yet reconciled (sync stays stopped while there is one).
package struct KnownServer: Sendable, Hashable {
    /// The identity the device synced with (`nil`: none yet, or a server without identities).
    package var identity: ServerIdentity?
    /// The latest stamp the device has taken from this server: the highest
    /// `updatedAt` of a pulled or acknowledged row and of a pull cursor
    /// (`nil` until an identity is known). Every one of those was issued by
    /// the server, so a server that still has its history is never behind it.
    package var seenStamp: Int64?
    /// The mismatch that stopped sync, until a reconciliation adopts the server the device now has.
    package var mismatch: ServerMismatch?

    /// Nothing known.
    package init(identity: ServerIdentity? = nil, seenStamp: Int64? = nil, mismatch: ServerMismatch? = nil) {
        self.identity = identity
        self.seenStamp = seenStamp
        self.mismatch = mismatch
    }

    /// What a push or pull tells the server (`nil` until an identity is known).
    package var expectation: ServerExpectation? {
        identity.map { ServerExpectation(identity: $0, seenStamp: seenStamp) }
    }

    /// Whether a checkpoint must carry this (identity or mismatch known): a
    /// device that never met a server with an identity has nothing here and
    /// writes checkpoints an older reader still opens.
    package var needsCheckpointPart: Bool { identity != nil || mismatch != nil }

    /// Raises the seen stamp to `stamp`, once an identity is known (before
    /// that, the stamp is taken from the rows and cursors when one is learned).
    package mutating func saw(_ stamp: Int64) {
        guard identity != nil else { return }
        if seenStamp.map({ $0 < stamp }) ?? true { seenStamp = stamp }
    }
}

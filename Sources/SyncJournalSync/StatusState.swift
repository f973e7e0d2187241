#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncJournalProtocol

/// What the engine remembers for its ``SyncStatus``: the last outcome, the
/// counts read from the store, and who listens.
struct StatusState: Sendable {
    /// What the engine is doing inside a sync (`nil`: no sync runs).
    var syncActivity: SyncStatus.Activity?
    /// How the last sync ended (`nil`: none yet).
    var lastOutcome: SyncOutcome?
    /// Whether the last sync's trouble was a server that did not answer.
    var serverUnreachable = false
    /// Whether the running sync found the server not answering. It becomes
    /// ``serverUnreachable`` only when the sync ends, so while a retry runs
    /// the status still tells the last sync's trouble as it was.
    var serverUnreachableThisSync = false
    /// Whether the status reads unreachable because a wait for changes
    /// failed, with no sync since: the next wait the server holds to its
    /// end brings a pull to put the status right.
    var serverUnreachableFromChangeWait = false
    /// The journaled mismatch that stops syncing, read from the store with the counts.
    var serverMismatch: ServerMismatch?
    /// When a sync last ended well (the clock's wall time).
    var lastSuccessAt: Date?
    /// The shared spaces lost while the engine ran.
    var lostSpaces: Set<SpaceID> = []
    /// Counts read from the store at the last refresh.
    var pending = 0
    var quarantined = 0
    var conflicts = 0
    var attachmentsToUpload = 0
    /// The attachment transfers running, in the order they started.
    var transfers: [AttachmentTransfer] = []
    /// The status last sent to listeners.
    var published: SyncStatus?
    /// Listeners of ``SyncEngine/statusUpdates()``, by id.
    var listeners: [Int: AsyncStream<SyncStatus>.Continuation] = [:]
    var nextListener = 0
}

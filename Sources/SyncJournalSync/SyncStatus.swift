#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncJournalProtocol

/// What a status bar shows about syncing: what the engine is doing, whether
/// it can reach the server, and what waits in the outbox.
///
/// ```swift
/// for await status in await engine.statusUpdates() {
///     spinner.isHidden = status.activity == .idle || status.activity == .waitingForChanges
///     badge.text = status.pendingOperations > 0 ? "\(status.pendingOperations) to send" : nil
///     if case .authenticationNeeded = status.connectivity { showSignIn() }
/// }
/// ```
public struct SyncStatus: Sendable, Hashable {
    /// What the engine is doing now.
    public enum Activity: Sendable, Hashable {
        /// Nothing: no sync runs and no wait for changes is open.
        case idle
        /// Sending queued operations.
        case pushing
        /// Fetching server changes.
        case pulling
        /// Between syncs, with a wait for server changes open.
        case waitingForChanges
    }

    /// Whether the server can be reached, as far as the engine knows.
    public enum Connectivity: Sendable, Hashable {
        /// The last sync reached the server (or none has run yet).
        case online
        /// The app reported the device offline (``SyncEngine/setOnline(_:)``).
        case offline
        /// The app reports the device online, but the last sync found no
        /// network route (no connection, no DNS).
        case noConnection
        /// The network works but the server did not answer: the connection
        /// was refused or timed out. The engine retries with backoff.
        case serverUnreachable(reason: String)
        /// The server answered that it is overloaded or failing (5xx, 429):
        /// the engine retries with backoff.
        case serverBusy(reason: String)
        /// The last sync stopped with this failure.
        case failing(SyncFailure)
        /// The server refused the credentials: syncing is paused until the
        /// app signs in again (``SyncEngine/resumeAfterAuthentication()``).
        case authenticationNeeded(reason: String)
        /// The server is not the one this device synced with, or it went
        /// back in time (restored from a backup): syncing is stopped, every
        /// local record kept, until the app runs
        /// ``SyncEngine/reconcileWithServer()``.
        case serverChanged(ServerMismatch)
    }

    /// What the engine is doing now.
    public var activity: Activity
    /// Whether the server can be reached.
    public var connectivity: Connectivity
    /// Operations waiting to be sent or acknowledged (not quarantined).
    public var pendingOperations: Int
    /// Operations set aside after failing permanently; the app decides what happens to them.
    public var quarantinedOperations: Int
    /// Conflicts the app has not resolved or dismissed.
    public var conflicts: Int
    /// When a sync last ended well, by the wall time of the engine's
    /// ``SyncClock`` (`nil`: not yet). A date, unlike the waits ahead
    /// (``SyncEngine/nextAttemptIn``): a moment that has passed reads the
    /// same however long the status is kept.
    public var lastSuccessfulSyncAt: Date?
    /// The shared spaces whose membership ended while this engine ran (the
    /// user was removed, left, or the space was deleted), ordered by id: their
    /// records left the device, and edits queued in them are in
    /// ``LocalStore/rejections()``. A space the user joins again leaves the list.
    public var lostSpaces: [SpaceID]
    /// Attachments added on this device that the server has not confirmed
    /// yet: each is uploaded before the first edit that refers to it is pushed.
    public var attachmentsToUpload: Int
    /// The attachment transfers running now, in the order they started,
    /// each with its progress.
    public var transfers: [AttachmentTransfer]

    /// A status; the engine makes these, tests and previews may too.
    public init(activity: Activity = .idle, connectivity: Connectivity = .online, pendingOperations: Int = 0,
                quarantinedOperations: Int = 0, conflicts: Int = 0, lastSuccessfulSyncAt: Date? = nil,
                lostSpaces: [SpaceID] = [], attachmentsToUpload: Int = 0, transfers: [AttachmentTransfer] = []) {
        self.lostSpaces = lostSpaces
        self.attachmentsToUpload = attachmentsToUpload
        self.transfers = transfers
        self.activity = activity
        self.connectivity = connectivity
        self.pendingOperations = pendingOperations
        self.quarantinedOperations = quarantinedOperations
        self.conflicts = conflicts
        self.lastSuccessfulSyncAt = lastSuccessfulSyncAt
    }
}

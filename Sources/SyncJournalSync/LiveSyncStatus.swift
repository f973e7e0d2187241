import Observation

/// An engine's sync status, kept current for a view: ``status`` changes
/// whenever the engine's does, and SwiftUI redraws what reads it.
///
/// ```swift
/// @MainActor
/// func statusBar(for engine: SyncEngine) -> LiveSyncStatus {
///     LiveSyncStatus(following: engine)
/// }
/// ```
///
/// It follows ``SyncEngine/statusUpdates()`` from the moment it is made until
/// it is released. Like that stream it keeps only the newest value: a view
/// that redraws slowly skips to the current status, never lags behind.
@MainActor
@Observable
public final class LiveSyncStatus {
    /// The status now: what the engine does, whether the server can be
    /// reached, what waits in the outbox, and when a sync last ended well.
    /// Until the engine's first value arrives (at once, after the engine
    /// reads its counts), an idle, online status with nothing pending.
    public private(set) var status = SyncStatus()
    @ObservationIgnored private var reader: Task<Void, Never>?

    /// Follows the status of `engine`.
    public init(following engine: SyncEngine) {
        reader = Task { [weak self] in
            for await status in await engine.statusUpdates() {
                guard let self else { return }
                self.status = status
            }
        }
    }

    deinit {
        reader?.cancel()
    }

    /// Whether a sync is sending or fetching now (for a spinner).
    public var isSyncing: Bool {
        status.activity == .pushing || status.activity == .pulling
    }

    /// Whether the server refused the credentials and syncing waits for the
    /// app to sign in again (``SyncEngine/resumeAfterAuthentication()``).
    public var needsSignIn: Bool {
        if case .authenticationNeeded = status.connectivity { return true }
        return false
    }
}

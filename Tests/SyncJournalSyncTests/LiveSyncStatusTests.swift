import Foundation
import Observation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// The observable status model a SwiftUI view reads, driven through the
/// reference server and a fault injector on the virtual clock.
@Suite("LiveSyncStatus for SwiftUI", .timeLimit(.minutes(5)))
struct LiveSyncStatusTests {
    @Test("a LiveSyncStatus shows an edit pending while offline, the refused token with the edit still pending, then the sync that sent it")
    @MainActor
    func followsTheEngine() async throws {
        let dir = try TemporaryDirectory(prefix: "live-sync-status"); defer { dir.remove() }
        let rig = try await LiveRig.open(dir.file("device.journal"), server: ReferenceServer())
        let live = LiveSyncStatus(following: rig.engine)
        await Self.waitUntil(live) { $0 == SyncStatus(activity: .idle, connectivity: .online) }

        await rig.engine.setOnline(false)
        try await rig.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        await Self.waitUntil(live) { $0.connectivity == .offline && $0.pendingOperations == 1 }
        #expect(!live.needsSignIn)

        await rig.faulty.inject(.unauthorized(reason: "HTTP 401"), on: .push)
        await rig.engine.setOnline(true)
        await rig.clock.advance(byMilliseconds: LiveRig.coalescing)
        await Self.waitUntil(live) { $0.connectivity == .authenticationNeeded(reason: "HTTP 401") }
        #expect(live.needsSignIn)
        #expect(live.status.pendingOperations == 1)
        #expect(live.status.lastSuccessfulSyncAt == nil)

        await rig.clock.advance(byMilliseconds: 5_000)
        _ = await rig.engine.resumeAfterAuthentication()
        await Self.waitUntil(live) { $0.connectivity == .online && $0.pendingOperations == 0 }
        #expect(!live.needsSignIn)
        #expect(live.status.lastSuccessfulSyncAt == rig.clock.wallTime)
        #expect(await rig.server.rows(user: "u1", kind: "pin").map(\.id) == ["p1"])
    }

    @Test("while a push is held at the server's door the model reads syncing, and afterwards waiting for changes")
    @MainActor
    func syncingWhileHeld() async throws {
        let dir = try TemporaryDirectory(prefix: "live-sync-status"); defer { dir.remove() }
        let rig = try await LiveRig.open(dir.file("device.journal"), server: ReferenceServer(), changeWaitTimeout: .seconds(60))
        let live = LiveSyncStatus(following: rig.engine)
        await Self.waitUntil(live) { $0.activity == .waitingForChanges }
        #expect(!live.isSyncing)

        try await rig.store.create("pin", id: "p1", fields: [:])
        await rig.faulty.holdNextRequest(.push)
        let syncing = Task { await rig.engine.sync() }
        await rig.faulty.waitUntilHeld()
        await Self.waitUntil(live) { $0.activity == .pushing }
        #expect(live.isSyncing)
        await rig.faulty.releaseHeld()
        _ = await syncing.value
        await Self.waitUntil(live) { $0.activity == .waitingForChanges && $0.pendingOperations == 0 }
        #expect(!live.isSyncing)
    }

    /// Returns once `live.status` satisfies `condition`, woken by
    /// Observation's change tracking (no polling, no sleeping). The model
    /// changes on the main actor, so no change slips between the check and
    /// the tracking.
    @MainActor
    static func waitUntil(_ live: LiveSyncStatus, _ condition: (SyncStatus) -> Bool) async {
        while !condition(live.status) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                withObservationTracking { _ = live.status } onChange: { continuation.resume() }
            }
        }
    }
}

import Foundation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// Reads status values until one matches (the stream keeps only the newest,
/// so values in between may be skipped, never reordered).
func nextStatus(_ updates: inout AsyncStream<SyncStatus>.Iterator,
                where matches: (SyncStatus) -> Bool) async -> SyncStatus? {
    while let status = await updates.next() {
        if matches(status) { return status }
    }
    return nil
}

/// The status a UI shows, through the engine's status stream.
@Suite("Sync status for a UI", .timeLimit(.minutes(5)))
struct SyncStatusTests {
    @Test("the status stream starts with the current value, then shows offline, a server down, refused credentials, recovery with the time of the last good sync, and a conflict")
    func statusSequence() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-status-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await LiveRig.open(dir.file("device.journal"), server: server)
        var updates = await rig.engine.statusUpdates().makeAsyncIterator()
        #expect(await updates.next() == SyncStatus(activity: .idle, connectivity: .online))

        await rig.engine.setOnline(false)
        try await rig.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        let offline = await nextStatus(&updates) { $0.pendingOperations == 1 }
        #expect(offline?.connectivity == .offline)

        await rig.faulty.inject(.serverUnreachable(reason: "connection refused"), on: .push)
        await rig.engine.setOnline(true)
        await rig.clock.advance(byMilliseconds: 0)
        let down = await nextStatus(&updates) { if case .serverUnreachable = $0.connectivity { return true } else { return false } }
        #expect(down?.pendingOperations == 1)
        #expect(down?.activity == .idle)

        await rig.faulty.inject(.unauthorized(reason: "HTTP 401"), on: .push)
        _ = await rig.engine.sync()
        let signIn = await nextStatus(&updates) { $0.connectivity == .authenticationNeeded(reason: "HTTP 401") }
        #expect(signIn?.pendingOperations == 1)

        await rig.clock.advance(byMilliseconds: 5_000)
        _ = await rig.engine.resumeAfterAuthentication()
        let recovered = await nextStatus(&updates) { $0.connectivity == .online }
        #expect(recovered == SyncStatus(activity: .idle, connectivity: .online, pendingOperations: 0, lastSuccessfulSyncAt: rig.clock.wallTimeAtStart + 5))

        // Another writer changes p1; the local edit of the same field conflicts (the server wins).
        await server.tick(1)
        _ = await server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs")])
        try await rig.store.update("pin", id: "p1", changes: ["name": .string("Mine")])
        _ = await rig.engine.sync()
        let conflicted = await nextStatus(&updates) { $0.conflicts == 1 }
        #expect(conflicted?.pendingOperations == 0)
        #expect(conflicted?.quarantinedOperations == 0)
    }

    @Test("a sync in progress shows pushing, then the status returns to waiting for changes")
    func activityDuringSync() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-status-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await LiveRig.open(dir.file("device.journal"), server: server, changeWaitTimeout: .seconds(60))
        var updates = await rig.engine.statusUpdates().makeAsyncIterator()
        #expect(await updates.next()?.activity == .waitingForChanges)
        try await rig.store.create("pin", id: "p1", fields: [:])
        await rig.faulty.holdNextRequest(.push)
        let syncing = Task { await rig.engine.sync() }
        await rig.faulty.waitUntilHeld()
        #expect(await rig.engine.status.activity == .pushing)
        await rig.faulty.releaseHeld()
        _ = await syncing.value
        let after = await nextStatus(&updates) { $0.pendingOperations == 0 && $0.activity != .pushing && $0.activity != .pulling }
        #expect(after?.activity == .waitingForChanges)
        #expect(after?.lastSuccessfulSyncAt == rig.clock.wallTimeAtStart)
    }

    @Test("while the retry after an unanswered sync runs, the status still reads server unreachable, never server busy")
    func unreachableDuringRetry() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-status-tests"); defer { dir.remove() }
        let rig = try await LiveRig.open(dir.file("device.journal"), server: ReferenceServer())
        await rig.faulty.inject(.serverUnreachable(reason: "connection refused"), on: .pull)
        #expect(await rig.engine.sync() == .retryLater(reason: "server unreachable: connection refused", retryAfter: nil))
        #expect(await rig.engine.status.connectivity == .serverUnreachable(reason: "server unreachable: connection refused"))

        await rig.faulty.holdNextRequest(.pull)
        let retry = Task { await rig.engine.sync() }
        await rig.faulty.waitUntilHeld()
        let during = await rig.engine.status
        #expect(during.activity == .pulling)
        #expect(during.connectivity == .serverUnreachable(reason: "server unreachable: connection refused"))
        await rig.faulty.releaseHeld()
        #expect(await retry.value == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(await rig.engine.status.connectivity == .online)
    }

    @Test("a sync that finds no route while the app reports online reads as no connection, not offline")
    func noRouteIsNotAppOffline() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-status-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await LiveRig.open(dir.file("device.journal"), server: server)
        await rig.faulty.setOffline(true)
        #expect(await rig.engine.sync() == .skipped(.offline))
        #expect(await rig.engine.status.connectivity == .noConnection)
        await rig.engine.setOnline(false)
        #expect(await rig.engine.status.connectivity == .offline)
    }
}

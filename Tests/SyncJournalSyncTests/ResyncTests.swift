import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// Resync: a pull cursor older than the server's tombstone horizon
/// fails with `cursorExpired`; the engine re-pulls that kind from the start,
/// replaces its snapshot, and keeps every pending local edit on top.
@Suite("Resync after the tombstone horizon")
struct ResyncTests {
    static func fields(_ name: String) -> [String: FieldValue] { ["name": .string(name)] }

    /// Whether `requests` holds a pull of `kind` from the start (a resync).
    static func hasPullFromStart(_ requests: [PullRequest], kind: String) -> Bool {
        requests.contains { request in request.cursors[kind].map { $0 == nil } ?? false }
    }

    /// The device's visible records of `kind`, by id.
    static func visible(_ store: LocalStore, _ kind: String = "pin") async throws -> [String: [String: FieldValue]] {
        Dictionary(uniqueKeysWithValues: try await store.records(kind).map { ($0.id, $0.fields) })
    }

    /// The server's live rows of `kind` for u1, by id.
    static func serverRows(_ server: ReferenceServer, _ kind: String = "pin") async -> [String: [String: FieldValue]] {
        Dictionary(uniqueKeysWithValues: await server.rows(user: "u1", kind: kind).map { ($0.id, $0.fields) })
    }

    @Test("a cursor behind a purged tombstone: the pull fails with cursorExpired, the kind is re-pulled from the start, deleted rows leave the device, and queued create/update/delete survive on top, survive a reopen and are pushed afterwards")
    func resyncReplacesSnapshotAndKeepsPendingEdits() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        for id in ["p1", "p2", "p3", "p4", "p5"] { await server.write(user: "u1", kind: "pin", id: id, fields: Self.fields(id)) }
        var device = try await Device.open(dir.file("device.journal"), server: server)
        #expect(await device.sync() == .ok(pushed: 0, pulled: 5, conflicts: 0))
        let oldCursor = try #require(try await device.store.cursor(for: "pin"))

        // Meanwhile on the server: p2 is deleted and its tombstone purged (the
        // device can never be told); then p3 is deleted (tombstone kept), p5
        // changes and p6 appears.
        await server.tick(10)
        #expect(await server.delete(kind: "pin", id: "p2") != nil)
        await server.tick(10)
        #expect(await server.purgeTombstones(olderThan: await server.now, kind: "pin") == 1)
        let horizon = try #require(await server.tombstoneHorizon(kind: "pin"))
        #expect(oldCursor < horizon, "the device's cursor is now behind the horizon")
        await server.tick(10)
        #expect(await server.delete(kind: "pin", id: "p3") != nil)
        await server.update(kind: "pin", id: "p5", changes: ["name": .string("p5 changed")])
        await server.write(user: "u1", kind: "pin", id: "p6", fields: Self.fields("p6"))

        // A sync whose pull is held: the device edits while it waits, so the
        // edits are still queued when the resync lands.
        await device.faulty.holdNextRequest(.pull)
        let engine = device.engine
        let syncing = Task { await engine.sync() }
        await device.faulty.waitUntilHeld()
        try await device.store.create("pin", id: "p9", fields: Self.fields("p9 new"))
        try await device.store.update("pin", id: "p1", changes: ["name": .string("p1 edited")])
        try await device.store.delete("pin", id: "p4")
        let pending = try await device.store.outboxOperations()
        #expect(pending.map(\.operation.kind) == [.create, .update, .delete])
        await device.faulty.releaseHeld()
        let resynced = await syncing.value
        #expect(resynced == .ok(pushed: 0, pulled: 5, conflicts: 0), "p1, p3's tombstone, p4, p5 and p6 re-pulled")

        let requests = await device.recorder.pullRequests
        let expiredAt = try #require(requests.lastIndex { $0.cursors["pin"] == .some(oldCursor) }, "the old cursor was sent")
        #expect(Self.hasPullFromStart(Array(requests[(expiredAt + 1)...]), kind: "pin"), "then the kind was pulled from the start")

        // The snapshot is replaced: p2 (purged tombstone) and p3 (tombstone) are gone.
        let state = try await device.store.currentState()
        #expect(Set(state.snapshot.keys.map(\.id)) == ["p1", "p4", "p5", "p6"])
        #expect(state.snapshot[RecordKey(kind: "pin", id: "p5")]?.fields == ["name": .string("p5 changed")])
        let cursor = try #require(try await device.store.cursor(for: "pin"))
        #expect(!(cursor < horizon), "the new cursor is past the horizon")
        // Every pending edit is still queued, unchanged, and shown on top.
        #expect(try await device.store.outboxOperations() == pending)
        #expect(try await Self.visible(device.store) == [
            "p1": ["name": .string("p1 edited")], "p5": ["name": .string("p5 changed")],
            "p6": Self.fields("p6"), "p9": ["name": .string("p9 new")],
        ])

        // The state survives a reopen exactly.
        let before = try await device.store.currentState()
        try await device.store.close()
        device = try await Device.open(device.path, server: server)
        #expect(try await device.store.currentState() == before)

        // The next sync pushes the three edits; device and server agree.
        #expect(await device.sync() == .ok(pushed: 3, pulled: 3, conflicts: 0))
        #expect(try await device.store.outboxOperations().isEmpty)
        #expect(await Self.serverRows(server) == [
            "p1": ["name": .string("p1 edited")], "p5": ["name": .string("p5 changed")],
            "p6": Self.fields("p6"), "p9": ["name": .string("p9 new")],
        ])
        #expect(try await Self.visible(device.store) == (await Self.serverRows(server)))
        try await device.store.close()
    }

    @Test("a tombstone retention on the server purges as time passes: the device's next pull resyncs and the deleted row disappears")
    func retentionHorizonTriggersResync() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer(tombstoneRetentionMilliseconds: 60_000)
        #expect(await server.tombstoneRetentionMilliseconds == 60_000)
        await server.write(user: "u1", kind: "pin", id: "p1", fields: Self.fields("p1"))
        await server.write(user: "u1", kind: "pin", id: "p2", fields: Self.fields("p2"))
        let device = try await Device.open(dir.file("device.journal"), server: server)
        #expect(await device.sync() == .ok(pushed: 0, pulled: 2, conflicts: 0))
        await server.tick(10)
        #expect(await server.delete(kind: "pin", id: "p2") != nil)
        await server.write(user: "u1", kind: "pin", id: "p3", fields: Self.fields("p3"))
        await server.tick(120_000)   // the tombstone is older than the retention now

        #expect(await device.sync() == .ok(pushed: 0, pulled: 2, conflicts: 0))
        #expect(await server.tombstoneHorizon(kind: "pin") != nil, "the pull purged the tombstone")
        #expect(Self.hasPullFromStart(await device.recorder.pullRequests.dropFirst().map { $0 }, kind: "pin"))
        #expect(try await Self.visible(device.store) == ["p1": Self.fields("p1"), "p3": Self.fields("p3")])
        try await device.store.close()
    }

    @Test("only the expired kind is resynced: another kind keeps its cursor and rows")
    func onlyExpiredKindResyncs() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        await server.write(user: "u1", kind: "pin", id: "p1", fields: Self.fields("p1"))
        await server.write(user: "u1", kind: "pin", id: "p2", fields: Self.fields("p2"))
        await server.write(user: "u1", kind: "note", id: "n1", fields: Self.fields("n1"))
        let device = try await Device.open(dir.file("device.journal"), server: server, kinds: ["note", "pin"])
        #expect(await device.sync() == .ok(pushed: 0, pulled: 3, conflicts: 0))
        let noteCursor = try #require(try await device.store.cursor(for: "note"))
        await server.tick(10)
        await server.delete(kind: "pin", id: "p2")
        await server.write(user: "u1", kind: "pin", id: "p3", fields: Self.fields("p3"))
        await server.tick(10)
        #expect(await server.purgeTombstones(olderThan: await server.now) == 1)
        #expect(await server.tombstoneHorizon(kind: "note") == nil)
        let requestsBefore = await device.recorder.pullRequests.count

        #expect(await device.sync() == .ok(pushed: 0, pulled: 2, conflicts: 0))
        let requests = Array(await device.recorder.pullRequests.dropFirst(requestsBefore))
        let resync = try #require(requests.first { $0.cursors["pin"].map { $0 == nil } ?? false })
        #expect(Array(resync.cursors.keys) == ["pin"], "the re-pull asks for the expired kind only")
        #expect(requests.allSatisfy { $0.cursors["note"].map { $0 == noteCursor } ?? true }, "note is never pulled from the start")
        #expect(try await device.store.cursor(for: "note") == noteCursor)
        #expect(try await Self.visible(device.store, "note") == ["n1": Self.fields("n1")])
        #expect(try await Self.visible(device.store) == ["p1": Self.fields("p1"), "p3": Self.fields("p3")])
        try await device.store.close()
    }

    @Test("a pending update of a row purged on the server survives the resync with its base row, and is pushed into an update/delete conflict")
    func pendingUpdateOfPurgedRowMeetsTheDeletion() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        await server.write(user: "u1", kind: "pin", id: "p1", fields: Self.fields("p1"))
        let base = await server.write(user: "u1", kind: "pin", id: "p2", fields: Self.fields("p2"))
        var device = try await Device.open(dir.file("device.journal"), server: server)
        #expect(await device.sync() == .ok(pushed: 0, pulled: 2, conflicts: 0))
        await server.tick(10)
        await server.delete(kind: "pin", id: "p2")
        await server.write(user: "u1", kind: "pin", id: "p3", fields: Self.fields("p3"))
        await server.tick(10)
        #expect(await server.purgeTombstones(olderThan: await server.now) == 1)

        await device.faulty.holdNextRequest(.pull)
        let engine = device.engine
        let syncing = Task { await engine.sync() }
        await device.faulty.waitUntilHeld()
        let op = try await device.store.update("pin", id: "p2", changes: ["name": .string("mine")]).operation
        await device.faulty.releaseHeld()
        #expect(await syncing.value == .ok(pushed: 0, pulled: 2, conflicts: 0))

        let key = RecordKey(kind: "pin", id: "p2")
        let state = try await device.store.currentState()
        #expect(state.snapshot[key] == nil, "the row the server no longer has is forgotten")
        #expect(state.baseRows[key] == base, "the copy the pending update was made on is kept")
        #expect(try await device.store.outboxOperations().map(\.id) == [op])
        try await device.store.close()
        device = try await Device.open(device.path, server: server)
        #expect(try await device.store.currentState() == state)

        #expect(await device.sync() == .ok(pushed: 0, pulled: 0, conflicts: 1))
        let conflict = try #require(try await device.store.conflicts().first)
        #expect(conflict.id == op && conflict.shape == .updatedButDeletedOnServer)
        #expect(conflict.baseRow == base)
        #expect(conflict.resolution.lostFields == ["name"])
        #expect(try await device.store.record("pin", id: "p2") == nil)
        try await device.store.close()
    }

    @Test("a resync whose newest change was a purged deletion: the sync that resyncs ends ok, and the next sync pulls without resyncing again")
    func resyncDoesNotRepeat() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        await server.write(user: "u1", kind: "pin", id: "p1", fields: Self.fields("p1"))
        await server.write(user: "u1", kind: "pin", id: "p2", fields: Self.fields("p2"))
        let device = try await Device.open(dir.file("device.journal"), server: server)
        #expect(await device.sync() == .ok(pushed: 0, pulled: 2, conflicts: 0))
        // The newest change of the kind is a deletion whose tombstone is then purged.
        await server.tick(10)
        await server.delete(kind: "pin", id: "p2")
        await server.tick(10)
        #expect(await server.purgeTombstones(olderThan: await server.now) == 1)
        let resynced = await device.sync()
        #expect(try await Self.visible(device.store) == ["p1": Self.fields("p1")], "the snapshot was replaced")

        let requestsBefore = await device.recorder.pullRequests.count
        let again = await device.sync()
        let requests = Array(await device.recorder.pullRequests.dropFirst(requestsBefore))
        #expect(resynced == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(again == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(requests.count == 1, "one pull, nothing re-downloaded")
        #expect(!Self.hasPullFromStart(requests, kind: "pin"))
        try await device.store.close()
    }

    @Test("a resync that takes several pages completes: the re-pull's own paging cursors are not refused as expired")
    func multiPageResyncCompletes() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        for id in ["p1", "p2", "p3", "p4", "p5"] { await server.write(user: "u1", kind: "pin", id: id, fields: Self.fields(id)) }
        let device = try await Device.open(dir.file("device.journal"), server: server, pullLimit: 2)
        #expect(await device.sync() == .ok(pushed: 0, pulled: 5, conflicts: 0))
        await server.tick(10)
        await server.delete(kind: "pin", id: "p2")
        await server.tick(10)
        #expect(await server.purgeTombstones(olderThan: await server.now) == 1)
        await server.write(user: "u1", kind: "pin", id: "p6", fields: Self.fields("p6"))

        // The re-pull from the start reads p1 and p3 first; its next page starts behind the horizon.
        let resynced = await device.sync()
        let visible = try await Self.visible(device.store)
        #expect(resynced == .ok(pushed: 0, pulled: 5, conflicts: 0))
        #expect(visible == ["p1": Self.fields("p1"), "p3": Self.fields("p3"), "p4": Self.fields("p4"),
                            "p5": Self.fields("p5"), "p6": Self.fields("p6")])
        try await device.store.close()
    }
}

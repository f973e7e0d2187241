import SyncJournalProtocol
import Foundation
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// The races of an offline clear vs. a new pin from another writer, of a
/// create deleted while its request is in flight, and of a store retired
/// while a request is open.
@Suite("Sync engine: offline clear, in-flight delete, retirement")
struct RaceTests {
    @Test("records cleared offline while another writer adds one: the new one survives, the deleted ones are gone")
    func offlineClearKeepsNewRecordFromAnotherWriter() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let phone = try await Device.open(dir.file("phone.journal"), server: server)
        try await phone.store.create("pin", id: "cafe", fields: ["name": .string("Cafe")])
        try await phone.store.create("pin", id: "museum", fields: ["name": .string("Museum")])
        #expect(await phone.sync() == .ok(pushed: 2, pulled: 2, conflicts: 0))

        // On the train: no signal; Dad clears the pins.
        await phone.faulty.setOffline(true)
        for record in try await phone.store.records("pin") { try await phone.store.delete("pin", id: record.id) }
        #expect(try await phone.store.records("pin").isEmpty)
        #expect(await phone.sync() == .skipped(.offline))
        #expect(try await phone.store.records("pin").isEmpty)
        // Meanwhile, in the chat, a new pin.
        await server.tick(60_000)
        await server.write(user: "u1", kind: "pin", id: "tapas", fields: ["name": .string("Tapas bar")])

        // Reconnect.
        await phone.faulty.setOffline(false)
        #expect(await phone.sync() == .ok(pushed: 2, pulled: 3, conflicts: 0))
        #expect(await server.rows(user: "u1", kind: "pin").map(\.id) == ["tapas"], "the new pin survives on the server")
        #expect(try await phone.store.records("pin").map(\.id) == ["tapas"], "and on the device")
        #expect(try await phone.store.outboxOperations().isEmpty)
        #expect(try await phone.store.conflicts().isEmpty)
        // Only per-id deletes were sent, never a whole list.
        let sent = await phone.recorder.pushBatches.last ?? []
        #expect(Set(sent.map(\.recordID)) == ["cafe", "museum"])
        #expect(sent.allSatisfy { $0.op == .delete })
    }

    @Test("an offline clear with a crash between the clear and the sync: the deletes survive on disk and the new record survives")
    func offlineClearSurvivesACrash() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let path = dir.file("phone.journal")
        let phone = try await Device.open(path, server: server)
        try await phone.store.create("pin", id: "cafe", fields: [:])
        #expect(await phone.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        await phone.faulty.setOffline(true)
        try await phone.store.delete("pin", id: "cafe")
        try await phone.store.close()
        await server.write(user: "u1", kind: "pin", id: "tapas", fields: [:])

        let restarted = try await Device.open(path, server: server)
        #expect(try await restarted.store.records("pin").isEmpty, "the offline removal is on disk")
        #expect(await restarted.sync() == .ok(pushed: 1, pulled: 2, conflicts: 0))
        #expect(await server.rows(user: "u1", kind: "pin").map(\.id) == ["tapas"])
        #expect(try await restarted.store.records("pin").map(\.id) == ["tapas"])
        try await restarted.store.close()
    }

    @Test("a create deleted while its request is in flight: the delete stays queued and follows; no resurrection")
    func createDeletedWhileInFlight() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let phone = try await Device.open(dir.file("phone.journal"), server: server)
        let tablet = try await Device.open(dir.file("tablet.journal"), server: server)
        try await phone.store.create("pin", id: "fuel", fields: ["litres": .double(42.5)])
        let create = try #require(try await phone.store.outboxOperations().first)

        await phone.faulty.holdNextRequest(.push)
        let sync = Task { await phone.sync() }
        await phone.faulty.waitUntilHeld()
        #expect(await phone.store.isInFlight(create.id))
        try await phone.store.delete("pin", id: "fuel")
        // Not cancelled: the create may reach the server, so the delete queues behind it.
        let queued = try await phone.store.outboxOperations()
        #expect(queued.map(\.operation.kind) == [.create, .delete])
        #expect(queued.first?.id == create.id)
        #expect(try await phone.store.record("pin", id: "fuel") == nil, "the app already sees it deleted")
        await phone.faulty.releaseHeld()

        #expect(await sync.value == .ok(pushed: 2, pulled: 1, conflicts: 0))
        let batches = await phone.recorder.pushBatches
        #expect(batches.map { $0.map(\.op) } == [[.create], [.delete]], "the delete is sent after the create's outcome")
        #expect(batches.last?.first?.baseUpdatedAt != nil, "the delete carries the create's server stamp")
        #expect(await server.row(kind: "pin", id: "fuel") == nil)
        #expect(try await phone.store.record("pin", id: "fuel") == nil)
        #expect(try await phone.store.outboxOperations().isEmpty)
        #expect(try await phone.store.conflicts().isEmpty)

        // A second device sees no resurrection.
        #expect(await tablet.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(try await tablet.store.records("pin").isEmpty)
        #expect(await tablet.recorder.pulledRows.allSatisfy(\.isTombstone))
    }

    @Test("offline: a create deleted before it was ever sent vanishes and nothing reaches the server")
    func createDeletedBeforeSendingVanishes() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let phone = try await Device.open(dir.file("phone.journal"), server: server)
        try await phone.store.create("pin", id: "fuel", fields: [:])
        try await phone.store.delete("pin", id: "fuel")
        #expect(try await phone.store.outboxOperations().isEmpty)
        #expect(await phone.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(await server.pushes == 0)
    }

    @Test("offline: a create made offline, a sync that found no connection, then a delete: both vanish, nothing reaches the server")
    func createDeletedAfterOfflineSyncVanishes() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let phone = try await Device.open(dir.file("phone.journal"), server: server)
        await phone.faulty.setOffline(true)
        try await phone.store.create("pin", id: "fuel", fields: [:])
        #expect(await phone.sync() == .skipped(.offline))
        try await phone.store.delete("pin", id: "fuel")
        #expect(try await phone.store.record("pin", id: "fuel") == nil)
        await phone.faulty.setOffline(false)
        _ = await phone.sync()
        #expect(await server.row(kind: "pin", id: "fuel") == nil)
        // The offline attempt withdrew its sent mark, so the delete cancels
        // the create locally: nothing reaches the server.
        #expect(await server.pushes == 0)
        #expect(await server.appliedMutations == 0)
    }

    @Test("a create deleted in flight, with a crash: create held, deleted, the server applies but the reply is lost, restart: no row anywhere")
    func createDeletedWhileInFlightThenCrash() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let path = dir.file("phone.journal")
        let phone = try await Device.open(path, server: server)
        try await phone.store.create("pin", id: "fuel", fields: ["litres": .double(42.5)])

        await phone.faulty.holdNextRequest(.push)
        let sync = Task { await phone.sync() }
        await phone.faulty.waitUntilHeld()
        try await phone.store.delete("pin", id: "fuel")
        await phone.faulty.releaseHeld(deliverReply: false)
        #expect(await sync.value.isRetryLater)
        #expect(await server.row(kind: "pin", id: "fuel") != nil, "the server applied the create")
        try await phone.store.close()

        let restarted = try await Device.open(path, server: server)
        let queued = try await restarted.store.outboxOperations()
        #expect(queued.map(\.operation.kind) == [.create, .delete], "the journal kept both, the create marked sent")
        #expect(queued.first?.sent == true)
        #expect(try await restarted.store.record("pin", id: "fuel") == nil)
        #expect(await restarted.sync() == .ok(pushed: 2, pulled: 1, conflicts: 0))
        #expect(await server.row(kind: "pin", id: "fuel") == nil, "server has no row")
        #expect(try await restarted.store.record("pin", id: "fuel") == nil, "device has no row")
        #expect(try await restarted.store.outboxOperations().isEmpty)
        #expect(await server.appliedMutations == 2, "the create once, the delete once")
        try await restarted.store.close()

        let tablet = try await Device.open(dir.file("tablet.journal"), server: server)
        #expect(await tablet.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(try await tablet.store.records("pin").isEmpty)
    }

    @Test("retirement: a held pull reply delivered to a retired store writes nothing; the new store keeps its delete")
    func retiredStoreIgnoresLateReply() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let path = dir.file("pins.journal")
        let old = try await Device.open(path, server: server)
        try await old.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        #expect(await old.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        // The late reply would carry a newer copy of p1.
        await server.update(kind: "pin", id: "p1", changes: ["name": .string("Café")])

        await old.faulty.holdNextRequest(.pull)
        let lateSync = Task { await old.sync() }
        await old.faulty.waitUntilHeld()
        await old.store.retire()
        let fresh = try await openStore(path)
        try await fresh.delete("pin", id: "p1")
        let sizeAfterDelete = try fileSize(path)
        let stateAfterDelete = try await fresh.currentState()
        await old.faulty.releaseHeld()

        let outcome = await lateSync.value
        #expect(outcome.failure == .store(.retired))
        #expect(await old.recorder.pages.first?.rows.map(\.id) == ["p1"], "the reply did arrive")
        #expect(try fileSize(path) == sizeAfterDelete, "the old engine wrote nothing")
        #expect(try await fresh.currentState() == stateAfterDelete)
        #expect(try await fresh.record("pin", id: "p1") == nil)
        #expect(try await fresh.outboxOperations().map(\.operation.kind) == [.delete])
        try await fresh.close()

        let reopened = try await openStore(path)
        #expect(try await reopened.record("pin", id: "p1") == nil)
        #expect(try await reopened.outboxOperations().map(\.operation.kind) == [.delete])
        try await reopened.close()
    }

    @Test("retirement during a held push: the late reply writes nothing; the new store resends and gets the first result")
    func retiredStoreIgnoresLatePushReply() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let path = dir.file("pins.journal")
        let old = try await Device.open(path, server: server)
        try await old.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])

        await old.faulty.holdNextRequest(.push)
        let lateSync = Task { await old.sync() }
        await old.faulty.waitUntilHeld()
        await old.store.retire()
        let fresh = try await Device.open(path, server: server)
        try await fresh.store.create("pin", id: "p2", fields: ["name": .string("Museum")])
        let sizeBefore = try fileSize(path)
        await old.faulty.releaseHeld()

        #expect(await lateSync.value.failure == .store(.retired))
        #expect(try fileSize(path) == sizeBefore)
        let queued = try await fresh.store.outboxOperations()
        #expect(queued.map(\.key.id) == ["p1", "p2"], "the late acknowledgement was not written")
        #expect(queued.first?.sent == true)

        #expect(await fresh.sync() == .ok(pushed: 2, pulled: 2, conflicts: 0))
        #expect(await server.appliedMutations == 2, "p1 applied once")
        #expect(try await fresh.store.outboxOperations().isEmpty)
        try await fresh.store.close()
    }

    @Test("a retired store's engine refuses to sync")
    func retiredStoreRefusesToSync() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server)
        try await device.store.create("pin", id: "p1", fields: [:])
        await device.store.retire()
        #expect(await device.sync().failure == .store(.retired))
        #expect(await device.faulty.requestCount == 0)
    }
}

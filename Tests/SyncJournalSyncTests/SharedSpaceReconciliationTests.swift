import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// A server restored from a backup, seen by members of a shared space:
/// reconciling brings back the space's records as it does the personal ones.
@Suite("Shared spaces after a server restore", .timeLimit(.minutes(5)))
struct SharedSpaceReconciliationTests {
    @Test("a restore taken before the owner's last syncs: reconciling brings the shared list its later edit, create and delete, re-sends nothing the backup already held, and the other member then sees the list as the owner left it")
    func restoredServerGetsTheSharedListBack() async throws {
        let dir = try TemporaryDirectory(prefix: "shared-space-reconciliation"); defer { dir.remove() }
        let server = ReferenceServer(identity: ServerIdentity("server-a"))
        let scene = try await SharingScene.open(dir, users: ["dad", "kid"], server: server)
        let dad = scene["dad"], kid = scene["kid"]
        let list = try await scene.share(by: "dad", with: ["kid": .editor])
        for id in ["p1", "p2", "p3"] { try await dad.store.create("pin", id: id, fields: ["title": .string(id)], in: list) }
        #expect(await dad.sync().endedWell)
        let backup = await server.snapshot()

        // After the backup: an edit, a create and a delete, all acknowledged.
        await server.tick(10)
        try await dad.store.update("pin", id: "p1", changes: ["title": "p1 after backup"], in: list)
        try await dad.store.create("pin", id: "p4", fields: ["title": "p4 after backup"], in: list)
        try await dad.store.delete("pin", id: "p2", in: list)
        #expect(await dad.sync().endedWell)
        let before = try await visibleIDs(dad.store, in: list)
        #expect(before == ["p1", "p3", "p4"])
        let pushesBefore = await server.pushes

        await server.restore(backup)
        guard case .failed(.serverMismatch) = await dad.sync() else { Issue.record("the restore went unnoticed"); return }
        let outcome = await dad.engine.reconcileWithServer()
        #expect(outcome.endedWell, "\(outcome)")
        let plan = await dad.engine.lastReconciliation
        // p1 at an older state: an update; p4 missing: a create; p2 seen deleted: a delete. p3 is as the backup held it.
        #expect(plan.uploads.map { "\($0.kind) \($0.recordID)" }.sorted() == ["create p4", "delete p2", "update p1"])
        #expect(await server.pushes > pushesBefore)
        #expect(try await visibleIDs(dad.store, in: list) == before)
        #expect(try await dad.store.record("pin", id: "p1", in: list)?.fields["title"] == "p1 after backup")
        #expect(await server.read(user: "kid", RecordKey(kind: "pin", id: "p2", space: list)) == nil, "the deletion the restore lost is made again")
        #expect(await server.read(user: "kid", RecordKey(kind: "pin", id: "p4", space: list))?.fields == ["title": "p4 after backup"])
        #expect(try await dad.store.conflicts().isEmpty)

        #expect(await kid.sync().endedWell)
        #expect(try await visibleIDs(kid.store, in: list) == before)
        #expect(try await kid.store.record("pin", id: "p1", in: list)?.fields["title"] == "p1 after backup")
    }

    @Test("a member removed from a shared list while a reconciliation is between kinds: the kinds already pulled do not bring the list's records back")
    func spaceLostBetweenKinds() async throws {
        let dir = try TemporaryDirectory(prefix: "shared-space-reconciliation-lost"); defer { dir.remove() }
        let server = ReferenceServer(identity: ServerIdentity("server-a"))
        // Kinds are reconciled in order: "note" first, then "pin".
        let scene = try await SharingScene.open(dir, users: ["dad", "kid"], server: server, kinds: ["pin", "note"])
        let dad = scene["dad"], kid = scene["kid"]
        let list = try await scene.share(by: "dad", with: ["kid": .editor])
        try await dad.store.create("note", id: "n1", fields: ["title": "n1"], in: list)
        try await dad.store.create("pin", id: "p1", fields: ["title": "p1"], in: list)
        #expect(await dad.sync().endedWell)
        let backup = await server.snapshot()
        await server.tick(10)
        try await dad.store.update("note", id: "n1", changes: ["title": "n1 after backup"], in: list)
        #expect(await dad.sync().endedWell)
        #expect(await kid.sync().endedWell)
        #expect(try await visibleIDs(kid.store, in: list, kind: "note") == ["n1"])
        await server.restore(backup)
        guard case .failed(.serverMismatch) = await kid.sync() else { Issue.record("the restore went unnoticed"); return }

        // The notes come whole; the pins' first page waits while dad removes kid.
        await kid.faulty.inject(.pass, on: .pull)
        await kid.faulty.holdNextRequest(.pull)
        let reconciling = Task { await kid.engine.reconcileWithServer() }
        await kid.faulty.waitUntilHeld()
        _ = try await server.transport(user: "dad").change(.removeMember(list, user: "kid"))
        await kid.faulty.releaseHeld()
        let outcome = await reconciling.value
        #expect(outcome.endedWell, "\(outcome)")

        #expect(try await kid.store.spaces().map(\.id).contains(list) == false, "the list is gone from the device")
        #expect(try await visibleIDs(kid.store, in: list, kind: "pin").isEmpty)
        #expect(try await visibleIDs(kid.store, in: list, kind: "note").isEmpty, "the note pulled before the removal is not kept")
        #expect(await kid.engine.status.lostSpaces == [list])
    }
}

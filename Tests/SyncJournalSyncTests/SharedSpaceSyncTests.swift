import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// Engines of several accounts sharing spaces on one reference server: the
/// races between members, a membership that ends or changes while a device
/// is offline, and backfills. Races are staged with held requests, never sleeps.
// The limit turns a wait that never ends into a failure, not a hang.
@Suite("Shared spaces: engines of several accounts on one server", .timeLimit(.minutes(5)))
struct SharedSpaceSyncTests {
    @Test("the pins race: the owner clears the shared list offline while an editor adds a pin; after both sync, both see the editor's pin and none of the cleared ones")
    func ownerClearsWhileEditorAdds() async throws {
        let dir = try TemporaryDirectory(prefix: "shared-space-tests"); defer { dir.remove() }
        let scene = try await SharingScene.open(dir, users: ["dad", "kid"])
        let dad = scene["dad"], kid = scene["kid"]
        let list = try await scene.share(by: "dad", with: ["kid": .editor])
        for id in ["p1", "p2", "p3"] { try await dad.store.create("pin", id: id, fields: ["title": .string(id)], in: list) }
        #expect(await dad.sync().endedWell)
        #expect(await kid.sync().endedWell)
        #expect(try await visibleIDs(kid.store, in: list) == ["p1", "p2", "p3"])

        // The owner clears the list offline: one delete per pin it saw.
        await dad.faulty.setOffline(true)
        for id in ["p1", "p2", "p3"] { try await dad.store.delete("pin", id: id, in: list) }
        #expect(await dad.sync() == .skipped(.offline))
        await dad.faulty.setOffline(false)
        // The deletes are on their way when the editor's pin lands.
        await dad.faulty.holdNextRequest(.push)
        let clearing = Task { await dad.sync() }
        await dad.faulty.waitUntilHeld()
        try await kid.store.create("pin", id: "p4", fields: ["title": "Tapas"], in: list)
        #expect(await kid.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        await dad.faulty.releaseHeld()
        #expect(await clearing.value.endedWell)
        #expect(await kid.sync().endedWell)

        #expect(try await visibleIDs(dad.store, in: list) == ["p4"])
        #expect(try await visibleIDs(kid.store, in: list) == ["p4"])
        for id in ["p1", "p2", "p3"] { #expect(await scene.server.read(user: "kid", RecordKey(kind: "pin", id: id, space: list)) == nil) }
        #expect(await scene.server.read(user: "dad", RecordKey(kind: "pin", id: "p4", space: list))?.fields == ["title": "Tapas"])
        #expect(try await dad.store.conflicts().isEmpty)
        #expect(try await kid.store.conflicts().isEmpty)
    }

    @Test("a member removed while offline with queued edits: its next sync takes the space's rows out of every query and observation, makes the edits rejections with the server's reason, answers their waiters, names the space lost, and nothing is sent again")
    func removedWhileOffline() async throws {
        let dir = try TemporaryDirectory(prefix: "shared-space-tests"); defer { dir.remove() }
        let scene = try await SharingScene.open(dir, users: ["dad", "kid"])
        let dad = scene["dad"], kid = scene["kid"]
        let list = try await scene.share(by: "dad", with: ["kid": .editor])
        for id in ["p1", "p2"] { try await dad.store.create("pin", id: id, fields: ["title": .string(id)], in: list) }
        #expect(await dad.sync().endedWell)
        try await kid.store.create("pin", id: "mine", fields: ["title": "Home"])
        #expect(await kid.sync().endedWell)
        #expect(try await kid.store.records("pin").map(\.id) == ["mine", "p1", "p2"])
        var everyPin = kid.store.observe(Query("pin")).makeAsyncIterator()
        var sharedPins = kid.store.observe(Query("pin").within(list)).makeAsyncIterator()
        #expect(await everyPin.next()?.map(\.id) == ["mine", "p1", "p2"])
        #expect(await sharedPins.next()?.map(\.id) == ["p1", "p2"])

        // Offline, the kid edits the list; meanwhile the owner removes the kid.
        await kid.faulty.setOffline(true)
        let edits = [try await kid.store.update("pin", id: "p1", changes: ["title": "Crux"], in: list).operation,
                     try await kid.store.create("pin", id: "p3", fields: ["title": "Arete"], in: list).operation,
                     try await kid.store.delete("pin", id: "p2", in: list).operation]
        #expect(await kid.sync() == .skipped(.offline))
        let waiters = edits.map { id in Task { await kid.store.outcome(of: id) } }
        try await dad.engine.removeMember("kid", from: list)
        await kid.faulty.setOffline(false)
        let pushesBefore = await kid.recorder.pushBatches.count
        #expect(await kid.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))

        #expect(try await kid.store.records("pin").map(\.id) == ["mine"], "only the personal pin is left")
        #expect(try await visibleIDs(kid.store, in: list).isEmpty)
        #expect(try await kid.store.record("pin", id: "p1", in: list) == nil)
        #expect(await everyPin.next()?.map(\.id) == ["mine"])
        #expect(await sharedPins.next()?.map(\.id) == [])
        let rejections = try await kid.store.rejections()
        #expect(Set(rejections.map(\.operation.id)) == Set(edits))
        for rejection in rejections { #expect(rejection.reason.hasPrefix("no access to space \(list)"), "\(rejection.reason)") }
        for (id, waiter) in zip(edits, waiters) {
            let rejection = try #require(await waiter.value.asRejected, "the waiter of \(id) is told it was rejected")
            #expect(rejection.operation.id == id && rejections.contains(rejection))
        }
        #expect(try await kid.store.outboxStatus().isEmpty)
        #expect(try await kid.store.spaces().isEmpty)
        #expect(await kid.engine.status.lostSpaces == [list])
        #expect(await kid.engine.status.quarantinedOperations == 0)
        let sent = await kid.recorder.pushBatches.dropFirst(pushesBefore).flatMap { $0 }.map(\.operationID)
        #expect(sent.count == edits.count && Set(sent) == Set(edits), "each edit went to the server once")

        // Nothing is sent again, and the lost space is no longer asked for.
        let requestsBefore = await kid.recorder.requests.count
        #expect(await kid.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(await kid.recorder.order.dropFirst(requestsBefore) == ["pull"])
        #expect(await kid.recorder.pullRequests.last?.spaces == [:])
        await #expect(throws: StoreError.noSuchSpace(list)) { try await kid.store.create("pin", id: "p5", fields: [:], in: list) }

        // The server refuses the space to the kid, whatever the device still sends.
        let server = scene.server.transport(user: "kid")
        let push = try await server.push([Mutation(operationID: .random(), kind: "pin", op: .create, recordID: "p6", fields: [:],
                                                   baseUpdatedAt: nil, space: list)])
        #expect(push.map(\.outcome) == [.rejected(reason: "no access to space \(list)", permanent: true)])
        let held = try #require(await dad.store.space(list))
        let page = try await server.pull(PullRequest(cursors: ["pin": nil], limit: 500,
                                                     spaces: [list: SpaceCursors(version: held.version, cursors: ["pin": nil])]))
        #expect(page.lostSpaces == [list] && page.spaces.isEmpty)
        #expect(page.rows.map(\.id) == ["mine"], "the personal pin alone")
        #expect(try await server.read(RecordKey(kind: "pin", id: "p1", space: list)) == nil)
        #expect(try await visibleIDs(dad.store, in: list) == ["p1", "p2"], "the owner's list is untouched")
    }

    @Test("a member added again after a removal backfills the space cleanly from its beginning: what changed meanwhile, what did not, and nothing deleted")
    func readdedMemberBackfills() async throws {
        let dir = try TemporaryDirectory(prefix: "shared-space-tests"); defer { dir.remove() }
        let scene = try await SharingScene.open(dir, users: ["dad", "kid"])
        let dad = scene["dad"], kid = scene["kid"]
        let list = try await scene.share(by: "dad", with: ["kid": .editor])
        for id in ["p1", "p2", "p3"] { try await dad.store.create("pin", id: id, fields: ["title": .string(id)], in: list) }
        #expect(await dad.sync().endedWell)
        #expect(await kid.sync().endedWell)
        try await dad.engine.removeMember("kid", from: list)
        #expect(await kid.sync().endedWell)
        #expect(try await kid.store.records("pin").isEmpty)
        #expect(await kid.engine.status.lostSpaces == [list])

        // While the kid is out: one pin deleted, one changed, one added, one left alone (p3).
        try await dad.store.delete("pin", id: "p1", in: list)
        try await dad.store.update("pin", id: "p2", changes: ["title": "Crux"], in: list)
        try await dad.store.create("pin", id: "p4", fields: ["title": "Tapas"], in: list)
        #expect(await dad.sync().endedWell)
        try await dad.engine.setMember("kid", role: .viewer, in: list)

        let pullsBefore = await kid.recorder.pullRequests.count
        #expect(await kid.sync().endedWell)
        let pulls = await kid.recorder.pullRequests.dropFirst(pullsBefore)
        #expect(pulls.map(\.spaces) == [[:]], "the space is not named: the server sends it from its beginning")
        let page = try #require(await kid.recorder.pages.last)
        #expect(page.spaces.map(\.id) == [list])
        #expect(page.rows.filter { $0.space == list }.map(\.id).sorted() == ["p1", "p2", "p3", "p4"],
                "every row of the space, the unchanged one and the tombstone included")
        #expect(try await kid.store.space(list)?.role == .viewer)
        #expect(await kid.engine.status.lostSpaces.isEmpty, "a member again")
        let pins = try await kid.store.fetch(Query("pin").within(list))
        #expect(pins.map(\.id) == ["p2", "p3", "p4"])
        #expect(pins.map { $0.fields["title"] } == ["Crux", "p3", "Tapas"])
        #expect(await kid.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0), "the backfill left the cursors at the end")
    }

    @Test("a viewer's edit is rejected at once with the server's reason: out of the queue into the rejections, its waiter and observers told, never retried nor quarantined")
    func viewerEditIsRejectedOnce() async throws {
        let dir = try TemporaryDirectory(prefix: "shared-space-tests"); defer { dir.remove() }
        let scene = try await SharingScene.open(dir, users: ["dad", "kid"])
        let dad = scene["dad"], kid = scene["kid"]
        let list = try await scene.share(by: "dad", with: ["kid": .editor])
        try await dad.store.create("pin", id: "p1", fields: ["title": "Cafe"], in: list)
        #expect(await dad.sync().endedWell)
        #expect(await kid.sync().endedWell)

        // Offline, the kid edits; meanwhile the owner makes the kid a viewer.
        await kid.faulty.setOffline(true)
        let edit = try await kid.store.update("pin", id: "p1", changes: ["title": "Mine"], in: list).operation
        #expect(await kid.sync() == .skipped(.offline))
        try await dad.engine.setMember("kid", role: .viewer, in: list)
        await kid.faulty.setOffline(false)
        let changes = await kid.store.changes()
        let waiter = Task { await kid.store.outcome(of: edit) }
        #expect(await kid.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        // A personal edit after the sync ends what the observer is read for.
        let marker = try await kid.store.create("pin", id: "marker", fields: [:])

        let reason = "read only: a viewer of space \(list)"
        let rejection = try #require(try await kid.store.rejections().first)
        #expect(try await kid.store.rejections().count == 1)
        #expect(rejection.operation.id == edit && rejection.reason == reason && rejection.attempts == 1)
        #expect(await waiter.value == .rejected(rejection))
        var rejectionsHeard: [RejectionRecord] = []
        for await change in changes {
            if case .rejected(let heard) = change { rejectionsHeard.append(heard) }
            if change == .edited(RecordKey(kind: "pin", id: marker.id)) { break }
        }
        #expect(rejectionsHeard == [rejection], "observers hear the rejection once")
        #expect(try await kid.store.outboxStatus().map(\.operation.id) == [marker.operation], "only the marker is queued")
        #expect(try await kid.store.quarantinedOperations().isEmpty)
        let record = try #require(try await kid.store.record("pin", id: "p1", in: list))
        #expect(record.fields == ["title": "Cafe"] && !record.hasPendingChanges, "the device shows the server's copy again")
        #expect(try await kid.store.space(list)?.role == .viewer)

        #expect(await kid.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0), "only the marker goes")
        for _ in 0..<2 { #expect(await kid.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0)) }
        #expect(await kid.recorder.pushBatches.flatMap { $0 }.filter { $0.operationID == edit }.count == 1, "sent once, never again")
        #expect(await scene.server.read(user: "dad", RecordKey(kind: "pin", id: "p1", space: list))?.fields == ["title": "Cafe"])
        await #expect(throws: StoreError.readOnlySpace(list)) {
            try await kid.store.update("pin", id: "p1", changes: ["title": "Again"], in: list)
        }

        try await kid.store.close()
        let reopened = try await openStore(kid.path)
        #expect(try await reopened.rejections() == [rejection], "the rejection is journaled")
        #expect(try await reopened.outboxStatus().isEmpty)
        try await reopened.close()
    }

    @Test("an edit into a space the user can no longer access (deleted meanwhile) is rejected at once with the server's reason, in the words used for a space that never existed")
    func editIntoDeletedSpaceIsRejected() async throws {
        let dir = try TemporaryDirectory(prefix: "shared-space-tests"); defer { dir.remove() }
        let scene = try await SharingScene.open(dir, users: ["dad", "kid"])
        let dad = scene["dad"], kid = scene["kid"]
        let list = try await scene.share(by: "dad", with: ["kid": .editor])
        #expect(await kid.sync().endedWell)

        await kid.faulty.setOffline(true)
        let edit = try await kid.store.create("pin", id: "p1", fields: ["title": "Tapas"], in: list).operation
        let personal = try await kid.store.create("pin", id: "p1", fields: ["title": "Home"]).operation
        #expect(await kid.sync() == .skipped(.offline))
        try await dad.engine.deleteSpace(list)
        await kid.faulty.setOffline(false)
        let waiter = Task { await kid.store.outcome(of: edit) }
        #expect(await kid.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0), "the personal pin of the same id goes through")

        let rejection = try #require(await waiter.value.asRejected)
        #expect(rejection.operation.id == edit && rejection.reason == "no access to space \(list)" && rejection.attempts == 1)
        #expect(try await kid.store.rejections() == [rejection])
        if case .acknowledged = await kid.store.outcome(of: personal) {} else { Issue.record("the personal create was acknowledged") }
        #expect(try await kid.store.records("pin").map(\.space) == [.personal])
        #expect(try await kid.store.quarantinedOperations().isEmpty)
        #expect(await kid.engine.status.lostSpaces == [list])
        #expect(await kid.recorder.pushBatches.flatMap { $0 }.filter { $0.operationID == edit }.count == 1)
    }

    @Test("joining a space of 10,000 rows backfills all of it in pages of the configured limit, each row once")
    func joiningBackfillsTenThousandRows() async throws {
        let dir = try TemporaryDirectory(prefix: "shared-space-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let big = SpaceID.random()
        try await server.change(user: "dad", .create(big, name: "Every crag"))
        for index in 0..<10_000 { await server.write(user: "dad", kind: "pin", id: "p\(index)", fields: ["n": .int(Int64(index))], space: big) }
        let scene = try await SharingScene.open(dir, users: ["kid"], server: server, pullLimit: 500)
        let kid = scene["kid"]
        #expect(await kid.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        try await server.change(user: "dad", .setMember(big, user: "kid", role: .viewer))

        #expect(await kid.sync() == .ok(pushed: 0, pulled: 10_000, conflicts: 0))
        let pulls = await kid.recorder.pullRequests.dropFirst()
        #expect(pulls.count == 20, "10,000 rows in pages of 500")
        #expect(pulls.allSatisfy { $0.limit == 500 })
        let rows = await kid.recorder.pulledRows
        #expect(rows.count == 10_000 && Set(rows.map(\.id)).count == 10_000)
        #expect(try await kid.store.count(Query("pin").within(big)) == 10_000)
        #expect(try await kid.store.record("pin", id: "p9999", in: big)?.fields == ["n": 9_999])
        #expect(await kid.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
    }

    @Test("a user in 200 spaces pulls all of them in one request, and once current pulls them again in one")
    func twoHundredSpacesInOneRequest() async throws {
        let dir = try TemporaryDirectory(prefix: "shared-space-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        var spaces: [SpaceID] = []
        for index in 0..<200 {
            let space = SpaceID.random()
            try await server.change(user: "dad", .create(space, name: "List \(index)"))
            try await server.change(user: "dad", .setMember(space, user: "kid", role: .editor))
            await server.write(user: "dad", kind: "pin", id: "p1", fields: ["list": .int(Int64(index))], space: space)
            spaces.append(space)
        }
        let scene = try await SharingScene.open(dir, users: ["kid"], server: server)
        let kid = scene["kid"]

        #expect(await kid.sync() == .ok(pushed: 0, pulled: 200, conflicts: 0))
        #expect(await kid.recorder.requests.count == 1, "one pull request for 200 spaces")
        #expect(try await kid.store.spaces().map(\.id) == spaces.sorted(by: <))
        #expect(try await kid.store.records("pin").count == 200)

        #expect(await kid.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(await kid.recorder.requests.count == 2, "and one again once current")
        #expect(await kid.recorder.pullRequests.last?.spaces?.keys.sorted(by: <) == spaces.sorted(by: <), "naming every space it holds")
    }

    @Test("a started engine that follows shared spaces waits on them too: joining a space, and another member's pin in it, each wake a pull")
    func changeWaitFollowsSharedSpaces() async throws {
        let dir = try TemporaryDirectory(prefix: "shared-space-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let list = SpaceID.random()
        try await server.change(user: "dad", .create(list, name: "Weekend pins"))
        try await server.change(user: "dad", .setMember(list, user: "kid", role: .editor))
        let store = try await openStore(dir.file("kid.journal"))
        let engine = SyncEngine(store: store, transport: FaultInjectingTransport(server.transport(user: "kid")),
                                options: .init(kinds: ["pin"], jitterSeed: 1, changeWaitTimeout: .seconds(60), followsSharedSpaces: true),
                                clock: ManualClock())
        await engine.start()
        await engine.untilChangeWaitsEnded(1)
        #expect(try await store.space(list)?.role == .editor, "the space the kid had joined woke the first wait")

        await server.write(user: "dad", kind: "pin", id: "p1", fields: ["title": "Tapas"], space: list)
        await engine.untilChangeWaitsEnded(2)
        #expect(try await store.record("pin", id: "p1", in: list)?.fields == ["title": "Tapas"])
        #expect(await engine.isWaitingForChanges)
        await engine.stop()
        try await store.close()
    }

    @Test("against a server without operation ids, a create in a shared space whose reply was lost is confirmed by reading back the row of its space, not the personal one of the same id")
    func readBackInSharedSpace() async throws {
        let dir = try TemporaryDirectory(prefix: "shared-space-tests"); defer { dir.remove() }
        let server = ReferenceServer(remembersOperationIDs: false)
        await server.write(user: "dad", kind: "pin", id: "p1", fields: ["title": "Home"])
        // The fault injector wraps the server's transport directly: it forwards reads of any space.
        let store = try await openStore(dir.file("dad.journal"))
        let faulty = FaultInjectingTransport(server.transport(user: "dad"))
        let engine = SyncEngine(store: store, transport: faulty, options: .init(kinds: ["pin"], jitterSeed: 1, followsSharedSpaces: true),
                                clock: ManualClock())
        let list = try await engine.createSpace(named: "Weekend pins").id
        let create = try await store.create("pin", id: "p1", fields: ["title": "Tapas"], in: list).operation
        await faulty.inject(.loseReply, on: .push)
        #expect(await engine.sync().isRetryLater)

        #expect(await engine.sync() == .ok(pushed: 1, pulled: 2, conflicts: 0))
        let row = try #require(await server.read(user: "dad", RecordKey(kind: "pin", id: "p1", space: list)))
        #expect(row.fields == ["title": "Tapas"])
        #expect(await store.outcome(of: create) == .acknowledged(row))
        #expect(try await store.conflicts().isEmpty)
        #expect(try await store.record("pin", id: "p1", in: list)?.fields == ["title": "Tapas"])
        #expect(try await store.record("pin", id: "p1")?.fields == ["title": "Home"])
        try await store.close()
    }

    @Test("a client-wins conflict in a shared space requeues the device's edit in that space, and the server applies it there, never to a personal record of the same id")
    func clientWinsRequeuesInItsSpace() async throws {
        let dir = try TemporaryDirectory(prefix: "shared-space-tests"); defer { dir.remove() }
        let scene = try await SharingScene.open(dir, users: ["dad", "kid"])
        let dad = scene["dad"], kid = scene["kid"]
        let list = try await scene.share(by: "dad", with: ["kid": .editor])
        try await dad.store.create("pin", id: "p1", fields: ["title": "Tapas"], in: list)
        #expect(await dad.sync().endedWell)
        #expect(await kid.sync().endedWell)
        await kid.store.setConflictPolicy(.clientWins, for: "pin")
        try await dad.store.update("pin", id: "p1", changes: ["title": "Tapas bar"], in: list)
        #expect(await dad.sync().endedWell)
        try await kid.store.update("pin", id: "p1", changes: ["title": "Tapas at 8"], in: list)

        #expect(await kid.sync().endedWell)
        let conflict = try #require(try await kid.store.conflicts().first)
        #expect(conflict.resolution.replacement?.space == list)
        #expect(await kid.sync().endedWell)
        #expect(await scene.server.read(user: "dad", RecordKey(kind: "pin", id: "p1", space: list))?.fields == ["title": "Tapas at 8"])
        #expect(await scene.server.read(user: "kid", RecordKey(kind: "pin", id: "p1")) == nil, "no personal pin was made")
        #expect(try await kid.store.outboxOperations().isEmpty)
    }

    @Test("a conflict in a shared space settled later by keeping the device's fields queues the edit in that space; once the user is a viewer, keeping theirs is refused as read-only")
    func keepingFieldsStaysInTheSpace() async throws {
        let dir = try TemporaryDirectory(prefix: "shared-space-tests"); defer { dir.remove() }
        let scene = try await SharingScene.open(dir, users: ["dad", "kid"])
        let dad = scene["dad"], kid = scene["kid"]
        let list = try await scene.share(by: "dad", with: ["kid": .editor])
        for id in ["p1", "p2"] { try await dad.store.create("pin", id: id, fields: ["title": .string(id)], in: list) }
        #expect(await dad.sync().endedWell)
        #expect(await kid.sync().endedWell)
        for id in ["p1", "p2"] { try await dad.store.update("pin", id: id, changes: ["title": "Dad's"], in: list) }
        #expect(await dad.sync().endedWell)
        for id in ["p1", "p2"] { try await kid.store.update("pin", id: id, changes: ["title": "Kid's"], in: list) }
        #expect(await kid.sync().endedWell)
        let conflicts = try await kid.store.conflicts()
        #expect(conflicts.map(\.operation.recordID).sorted() == ["p1", "p2"])

        let first = try #require(conflicts.first { $0.operation.recordID == "p1" })
        try await kid.store.resolveConflict(first.id, keeping: .keep(["title": "Kid's"]))
        #expect(try await kid.store.outboxOperations().map(\.operation.key) == [RecordKey(kind: "pin", id: "p1", space: list)])
        #expect(await kid.sync().endedWell)
        #expect(await scene.server.read(user: "dad", RecordKey(kind: "pin", id: "p1", space: list))?.fields == ["title": "Kid's"])

        try await dad.engine.setMember("kid", role: .viewer, in: list)
        #expect(await kid.sync().endedWell)
        let second = try #require(conflicts.first { $0.operation.recordID == "p2" })
        await #expect(throws: StoreError.readOnlySpace(list)) { try await kid.store.resolveConflict(second.id, keeping: .keep(["title": "Kid's"])) }
        try await kid.store.resolveConflict(second.id, keeping: .acceptServer)
        #expect(try await kid.store.outboxOperations().isEmpty)
        #expect(try await kid.store.conflicts().isEmpty)
    }
}

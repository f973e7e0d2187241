import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// A device whose server is reset, swapped for another database or restored
/// from a backup: sync stops with a typed outcome, nothing is charged,
/// deleted, conflicted or forgotten, and a reconciliation brings the server
/// every record the device has.
@Suite("A changed server: detection and reconciliation")
struct ServerIdentityTests {
    static let serverA = ServerIdentity("server-a")!
    static let serverB = ServerIdentity("server-b")!

    static func name(_ text: String) -> [String: FieldValue] { ["name": .string(text)] }

    /// The device's visible pins, by id.
    static func visible(_ store: LocalStore) async throws -> [String: [String: FieldValue]] {
        Dictionary(uniqueKeysWithValues: try await store.records("pin").map { ($0.id, $0.fields) })
    }

    /// The server's live pins of u1, by id.
    static func serverPins(_ server: ReferenceServer) async -> [String: [String: FieldValue]] {
        Dictionary(uniqueKeysWithValues: await server.rows(user: "u1", kind: "pin").map { ($0.id, $0.fields) })
    }

    /// A device with p1…p5 synced to `server`, then queued: an update of p1,
    /// a delete of p2 and a create of p6.
    static func deviceWithPendingEdits(_ path: String, server: ReferenceServer) async throws -> Device {
        let device = try await Device.open(path, server: server)
        for index in 1...5 { try await device.store.create("pin", id: "p\(index)", fields: name("p\(index)")) }
        guard case .ok(let pushed, _, _) = await device.sync() else { throw TestFailure("the first sync failed") }
        #expect(pushed == 5)
        try await device.store.update("pin", id: "p1", changes: name("p1 edited"))
        try await device.store.delete("pin", id: "p2")
        try await device.store.create("pin", id: "p6", fields: name("p6"))
        return device
    }

    struct TestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Expects that `device` stopped for `mismatch` and kept everything: the
    /// same visible records, queue and conflicts as before.
    static func expectStopped(_ device: Device, _ mismatch: ServerMismatch, visible before: [String: [String: FieldValue]],
                              queued: Int) async throws {
        #expect(await device.sync() == .failed(.serverMismatch(mismatch)))
        #expect(try await visible(device.store) == before, "no record is deleted or changed because the server changed")
        #expect(try await device.store.currentState().outbox.count == queued, "no queued edit is charged or dropped")
        #expect(try await device.store.conflicts().isEmpty, "no conflict is made of it")
        #expect(try await device.store.knownServer().mismatch == mismatch, "the stop is journaled")
    }

    @Test("a server reset to an empty database: the push carrying the old identity is refused, the device keeps every record and edit, later syncs and a restart send nothing, and reconciliation re-uploads every record with the queued edits on top so a second device sees them all")
    func emptyDatabase() async throws {
        let dir = try TemporaryDirectory(prefix: "server-identity"); defer { dir.remove() }
        let server = ReferenceServer(identity: Self.serverA)
        var device = try await Self.deviceWithPendingEdits(dir.file("device.journal"), server: server)
        #expect(try await device.store.knownServer().identity == Self.serverA)
        let before = try await Self.visible(device.store)

        await server.reset(identity: Self.serverB)
        let mismatch = ServerMismatch.differentServer(expected: Self.serverA, found: Self.serverB)
        try await Self.expectStopped(device, mismatch, visible: before, queued: 3)
        #expect(await Self.serverPins(server).isEmpty, "nothing reached the new database")
        let requests = await device.recorder.requests.count
        #expect(await device.sync() == .failed(.serverMismatch(mismatch)))
        #expect(await device.recorder.requests.count == requests, "a stopped device sends nothing")

        try await device.store.close()
        device = try await Device.open(dir.file("device.journal"), server: server)
        #expect(await device.sync() == .failed(.serverMismatch(mismatch)), "the stop survives a restart")
        #expect(await device.recorder.requests.isEmpty)

        let outcome = await device.engine.reconcileWithServer()
        guard case .ok = outcome else { Issue.record("reconciliation: \(outcome)"); return }
        #expect(try await Self.visible(device.store) == before)
        #expect(await Self.serverPins(server) == before, "the server has every record, with the queued edits")
        let known = try await device.store.knownServer()
        #expect(known.identity == Self.serverB && known.mismatch == nil)
        #expect(try await device.store.currentState().outbox.isEmpty)
        #expect(await device.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))

        let other = try await Device.open(dir.file("other.journal"), server: server)
        guard case .ok = await other.sync() else { Issue.record("the second device's sync failed"); return }
        #expect(try await Self.visible(other.store) == before)
    }

    @Test("a server swapped for another server's database: its own records are pulled, the device's records are re-uploaded, a record both hold with other fields takes the device's copy, and nothing the device had is lost")
    func anotherServersDatabase() async throws {
        let dir = try TemporaryDirectory(prefix: "server-identity"); defer { dir.remove() }
        let server = ReferenceServer(identity: Self.serverA)
        let device = try await Self.deviceWithPendingEdits(dir.file("device.journal"), server: server)
        let before = try await Self.visible(device.store)

        let other = ReferenceServer(identity: Self.serverB)
        await other.write(user: "u1", kind: "pin", id: "q1", fields: Self.name("q1 from B"))
        await other.write(user: "u1", kind: "pin", id: "p3", fields: Self.name("p3 as B has it"))
        await other.write(user: "u1", kind: "pin", id: "p4", fields: Self.name("p4"))
        await server.restore(await other.snapshot())

        try await Self.expectStopped(device, .differentServer(expected: Self.serverA, found: Self.serverB), visible: before, queued: 3)
        let outcome = await device.engine.reconcileWithServer()
        guard case .ok = outcome else { Issue.record("reconciliation: \(outcome)"); return }
        var expected = before
        expected["q1"] = Self.name("q1 from B")
        #expect(try await Self.visible(device.store) == expected)
        #expect(await Self.serverPins(server) == expected)
        #expect(try await device.store.conflicts().isEmpty)
    }

    @Test("a server restored from a backup taken before the device's last syncs: the push is refused as behind, and reconciliation brings back the device's later edit, create and delete without touching what the backup already had")
    func backupBeforeLastSync() async throws {
        let dir = try TemporaryDirectory(prefix: "server-identity"); defer { dir.remove() }
        let server = ReferenceServer(identity: Self.serverA)
        let device = try await Device.open(dir.file("device.journal"), server: server)
        for index in 1...5 { try await device.store.create("pin", id: "p\(index)", fields: Self.name("p\(index)")) }
        guard case .ok = await device.sync() else { Issue.record("first sync"); return }
        let backup = await server.snapshot()
        // Three more syncs after the backup: an edit, a create, a delete.
        await server.tick(10)
        try await device.store.update("pin", id: "p1", changes: Self.name("p1 after backup"))
        guard case .ok = await device.sync() else { Issue.record("second sync"); return }
        try await device.store.create("pin", id: "p7", fields: Self.name("p7 after backup"))
        guard case .ok = await device.sync() else { Issue.record("third sync"); return }
        try await device.store.delete("pin", id: "p4")
        guard case .ok = await device.sync() else { Issue.record("fourth sync"); return }
        // One edit still queued when the server is restored.
        try await device.store.update("pin", id: "p3", changes: Self.name("p3 queued"))
        let before = try await Self.visible(device.store)
        let seen = try #require(try await device.store.knownServer().seenStamp)

        await server.restore(backup)
        let latest = await server.latestStamp
        #expect(latest < seen)
        try await Self.expectStopped(device, .behind(identity: Self.serverA, seenStamp: seen, latestStamp: latest), visible: before,
                                     queued: 1)
        let outcome = await device.engine.reconcileWithServer()
        guard case .ok = outcome else { Issue.record("reconciliation: \(outcome)"); return }
        #expect(try await Self.visible(device.store) == before, "p4, deleted by this device after the backup, stays deleted")
        #expect(await Self.serverPins(server) == before)
        #expect(try await device.store.conflicts().isEmpty)
        let fresh = try await Device.open(dir.file("fresh.journal"), server: server)
        guard case .ok = await fresh.sync() else { Issue.record("fresh device"); return }
        #expect(try await Self.visible(fresh.store) == before)
    }

    @Test("a server without an identity keeps working: nothing is learned or expected, and pushes carry no expectation")
    func serverWithoutIdentity() async throws {
        let dir = try TemporaryDirectory(prefix: "server-identity"); defer { dir.remove() }
        let server = ReferenceServer(identity: nil)
        let device = try await Device.open(dir.file("device.journal"), server: server)
        try await device.store.create("pin", id: "p1", fields: Self.name("p1"))
        guard case .ok = await device.sync() else { Issue.record("sync"); return }
        try await device.store.update("pin", id: "p1", changes: Self.name("p1 again"))
        #expect(await device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        let known = try await device.store.knownServer()
        #expect(known.identity == nil && known.mismatch == nil)
        #expect(await device.recorder.expectations.allSatisfy { $0 == nil })
        #expect(await device.recorder.pullRequests.allSatisfy { $0.expectation == nil })
    }

    @Test("a server that does not check expectations but names another identity: the page is refused before any row of it is kept")
    func pageFromAnotherServer() async throws {
        let dir = try TemporaryDirectory(prefix: "server-identity"); defer { dir.remove() }
        let server = ReferenceServer(identity: Self.serverA)
        let store = try await openStore(dir.file("device.journal"))
        let lax = ExpectationDroppingTransport(base: server.transport(user: "u1"))
        let engine = SyncEngine(store: store, transport: lax, options: .init(kinds: ["pin"]))
        try await store.create("pin", id: "p1", fields: Self.name("p1"))
        guard case .ok = await engine.sync() else { Issue.record("sync"); return }
        let other = ReferenceServer(identity: Self.serverB)
        await other.write(user: "u1", kind: "pin", id: "q1", fields: Self.name("q1"))
        await server.restore(await other.snapshot())
        #expect(await engine.sync() == .failed(.serverMismatch(.differentServer(expected: Self.serverA, found: Self.serverB))))
        #expect(try await store.record("pin", id: "q1") == nil, "no row of the other server's page was kept")
        #expect(try await store.record("pin", id: "p1") != nil)
    }

    @Test("the identity, the seen stamp and the stop survive a checkpoint and a reopen")
    func survivesCheckpoint() async throws {
        let dir = try TemporaryDirectory(prefix: "server-identity"); defer { dir.remove() }
        let server = ReferenceServer(identity: Self.serverA)
        var device = try await Self.deviceWithPendingEdits(dir.file("device.journal"), server: server)
        await server.reset(identity: Self.serverB)
        _ = await device.sync()
        let known = try await device.store.knownServer()
        #expect(known.mismatch != nil && known.identity == Self.serverA && known.seenStamp != nil)
        try await device.store.checkpoint()
        try await device.store.close()
        device = try await Device.open(dir.file("device.journal"), server: server)
        #expect(try await device.store.knownServer() == known)
    }
}

/// A transport to a server that reports its identity but never checks what
/// the device expects (the expectation is dropped on the way).
struct ExpectationDroppingTransport: SyncTransport {
    let base: any SyncTransport

    func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] { try await base.push(mutations) }

    func push(_ mutations: [Mutation], expecting expectation: ServerExpectation?) async throws(TransportError) -> [MutationResult] {
        try await base.push(mutations)
    }

    func pull(_ request: PullRequest) async throws(TransportError) -> PullPage {
        var request = request
        request.expectation = nil
        return try await base.pull(request)
    }
}

extension ServerIdentityTests {
    @Test("a reconciliation interrupted after its re-uploads were journaled (the process ends before the snapshot is replaced) is run again from the start: nothing is queued twice and the server gets every record once")
    func interruptedReconciliationReruns() async throws {
        let dir = try TemporaryDirectory(prefix: "server-identity"); defer { dir.remove() }
        let server = ReferenceServer(identity: Self.serverA)
        var device = try await Self.deviceWithPendingEdits(dir.file("device.journal"), server: server)
        let before = try await Self.visible(device.store)
        await server.reset(identity: Self.serverB)
        _ = await device.sync()

        // The first steps of a reconciliation, as the engine takes them, then the process ends.
        let plan = try await device.store.queueReuploads(serverRows: [:], kinds: ["pin"], sameHistory: false)
        #expect(plan.uploads.count == 5, "p1 to p5 are re-created, p1 and p2 ahead of their queued update and delete; p6 goes by its own create")
        let queued = try await device.store.currentState().outbox.count
        try await device.store.close()

        device = try await Device.open(dir.file("device.journal"), server: server)
        #expect(try await device.store.knownServer().mismatch != nil, "still stopped: the reconciliation did not finish")
        #expect(await device.sync() == .failed(.serverMismatch(.differentServer(expected: Self.serverA, found: Self.serverB))))
        let again = try await device.store.queueReuploads(serverRows: [:], kinds: ["pin"], sameHistory: false)
        #expect(again.isEmpty, "a rerun queues nothing twice")
        #expect(try await device.store.currentState().outbox.count == queued)
        let outcome = await device.engine.reconcileWithServer()
        guard case .ok = outcome else { Issue.record("reconciliation: \(outcome)"); return }
        #expect(await Self.serverPins(server) == before)
        #expect(try await Self.visible(device.store) == before)
        let pushed = await device.recorder.pushBatches.flatMap { $0 }
        #expect(Set(pushed.map(\.operationID)).count == pushed.count, "every operation was sent once")
    }

    @Test("status on the manual clock: a changed server reads serverChanged, pauses scheduling (no retries however long the clock runs) and keeps reading so after a restart; a reconciliation puts it back online")
    func statusOnManualClock() async throws {
        let dir = try TemporaryDirectory(prefix: "server-identity"); defer { dir.remove() }
        let server = ReferenceServer(identity: Self.serverA)
        let clock = ManualClock()
        var rig = try await LiveRig.open(dir.file("device.journal"), server: server, clock: clock)
        try await rig.store.create("pin", id: "p1", fields: Self.name("p1"))
        #expect(await rig.engine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        await server.reset(identity: Self.serverB)
        try await rig.store.update("pin", id: "p1", changes: Self.name("p1 edited"))
        let mismatch = ServerMismatch.differentServer(expected: Self.serverA, found: Self.serverB)
        #expect(await rig.engine.sync() == .failed(.serverMismatch(mismatch)))
        #expect(await rig.engine.status.connectivity == .serverChanged(mismatch))
        #expect(await rig.engine.nextAttemptAtMilliseconds == nil, "nothing is scheduled: retrying cannot help")
        let started = await rig.engine.syncsStarted
        await clock.advance(byMilliseconds: 3_600_000)
        #expect(await rig.engine.syncsStarted == started, "an hour later, still no retry")

        await rig.engine.stop()
        try await rig.store.close()
        rig = try await LiveRig.open(dir.file("device.journal"), server: server, clock: clock)
        #expect(await rig.engine.status.connectivity == .serverChanged(mismatch), "read from the journal after a restart")

        guard case .ok = await rig.engine.reconcileWithServer() else { Issue.record("reconciliation failed"); return }
        #expect(await rig.engine.status.connectivity == .online)
        #expect(await Self.serverPins(server) == ["p1": Self.name("p1 edited")])
    }
}

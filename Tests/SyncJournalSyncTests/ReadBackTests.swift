import Foundation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// Servers without exactly-once delivery: a table that answers
/// `duplicate` and `noMatch` instead of remembering operation ids. The engine
/// reads the row back to tell success, conflict and loss apart.
@Suite("Servers without exactly-once: confirming by reading back")
struct ReadBackTests {
    /// A device (syncing by hand, on a virtual clock for backoffs) talking to
    /// a server that does not remember operation ids.
    static func device(_ dir: TemporaryDirectory, server: ReferenceServer, kinds: [String] = ["pin"],
                       maximumPermanentFailures: Int = 3) async throws -> FailureRig {
        var settings = FailureRig.Settings()
        settings.kinds = kinds
        settings.maximumPermanentFailures = maximumPermanentFailures
        return try await FailureRig.open(dir.file("device.journal"), server: server, settings: settings, start: false)
    }

    /// A device whose p1 is synced, with the server's row.
    static func deviceWithSyncedP1(_ dir: TemporaryDirectory, server: ReferenceServer, kinds: [String] = ["pin"])
        async throws -> (FailureRig, ServerRow) {
        let rig = try await device(dir, server: server, kinds: kinds)
        try await rig.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        try #require(await rig.engine.sync().isOK)
        try #require(try await rig.store.outboxOperations().isEmpty)
        #expect(await server.reads == 0, "a plain insert needs no read")
        return (rig, try #require(await server.row(kind: "pin", id: "p1")))
    }

    // MARK: Duplicate creates

    @Test("a create whose reply was lost is resent, answered duplicate, and confirmed by reading the row back: acknowledged, applied once, no conflict")
    func lostCreateReplyIsConfirmedByReadBack() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer(remembersOperationIDs: false)
        let rig = try await Self.device(dir, server: server)
        try await rig.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        let create = try #require(try await rig.store.outboxOperations().first).id
        await rig.faulty.inject(.loseReply, on: .push)
        #expect(await rig.engine.sync().isRetryLater)
        #expect(await server.appliedMutations == 1, "the server inserted it; the reply was lost")

        #expect(await rig.engine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await server.reads == 1, "confirmed by one read")
        #expect(await server.appliedMutations == 1, "applied once")
        let row = try #require(await server.row(kind: "pin", id: "p1"))
        #expect(await rig.store.outcome(of: create) == .acknowledged(row))
        #expect(try await rig.store.outboxOperations().isEmpty)
        #expect(try await rig.store.conflicts().isEmpty)
        let record = try #require(try await rig.store.record("pin", id: "p1"))
        #expect(record.serverUpdatedAt == row.updatedAt && !record.hasPendingChanges)
    }

    @Test("a create confirmed by reading back gives the edit queued behind it the row's stamp, so that edit applies")
    func confirmedCreateRebasesTheNextEdit() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer(remembersOperationIDs: false)
        let rig = try await Self.device(dir, server: server)
        try await rig.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        await rig.faulty.inject(.loseReply, on: .push)
        #expect(await rig.engine.sync().isRetryLater)
        try await rig.store.update("pin", id: "p1", changes: ["visited": .bool(true)])
        #expect(try await rig.store.outboxOperations().count == 2, "the update waits behind the sent create")

        #expect(await rig.engine.sync() == .ok(pushed: 2, pulled: 1, conflicts: 0))
        #expect(await server.reads == 1)
        #expect(await server.appliedMutations == 2)
        #expect(await server.row(kind: "pin", id: "p1")?.fields == ["name": .string("Cafe"), "visited": .bool(true)])
        #expect(try await rig.store.outboxOperations().isEmpty)
    }

    @Test("a duplicate create whose row reads back with other fields is a conflict (create/exists), resolved server wins")
    func duplicateWithOtherFieldsIsAConflict() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer(remembersOperationIDs: false)
        // Another device of the same user made p1 first.
        let theirs = await server.write(user: "u1", kind: "pin", id: "p1", fields: ["name": .string("Theirs")])
        let rig = try await Self.device(dir, server: server)
        try await rig.store.create("pin", id: "p1", fields: ["name": .string("Mine")])
        let create = try #require(try await rig.store.outboxOperations().first).id

        #expect(await rig.engine.sync() == .ok(pushed: 0, pulled: 1, conflicts: 1))
        #expect(await server.reads == 1)
        let conflict = try #require(try await rig.store.conflicts().first)
        #expect(conflict.id == create)
        #expect(conflict.shape == .createdButExistsOnServer)
        #expect(conflict.server == theirs)
        #expect(conflict.resolution.lostFields == ["name"])
        #expect(await rig.store.outcome(of: create).conflictRecord?.id == create)
        #expect(try await rig.store.record("pin", id: "p1")?.fields == ["name": .string("Theirs")])
        #expect(await server.row(kind: "pin", id: "p1") == theirs, "the server's row is untouched")
        #expect(await server.appliedMutations == 0)
        #expect(try await rig.store.outboxOperations().isEmpty)
    }

    @Test("an id collision with another user's row cannot be read back: the create stays queued and is retried, never quarantined and never charged a permanent failure")
    func unreadableCollisionStaysRetryable() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer(remembersOperationIDs: false)
        let othersRow = await server.write(user: "u2", kind: "pin", id: "p1", fields: ["name": .string("Not yours")])
        // A budget of 1: a single permanent charge would quarantine it.
        var settings = FailureRig.Settings()
        settings.maximumPermanentFailures = 1
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server, settings: settings, start: false)
        try await rig.store.create("pin", id: "p1", fields: ["name": .string("Mine")])
        let create = try #require(try await rig.store.outboxOperations().first).id

        for round in 1...5 {
            #expect(await rig.engine.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
            #expect(await server.reads == round)
            let entry = try #require(try await rig.entry(create))
            #expect(entry.attempts == round)
            #expect(entry.permanentFailures == 0)
            #expect(entry.lastFailure == .transient)
            #expect(!entry.quarantined)
            #expect(entry.lastError?.contains("collision") == true)
            // Retryable: it has a next attempt time, after its own backoff.
            let status = try #require(try await rig.engine.outboxStatus().first)
            #expect(status.state == .sent && status.nextAttemptIn != nil)
            await rig.clock.advance(byMilliseconds: RetryPolicy().maximumDelayMilliseconds)
        }
        #expect(try await rig.store.quarantinedOperations().isEmpty)
        #expect(try await rig.store.conflicts().isEmpty)
        #expect(try await rig.store.record("pin", id: "p1")?.fields == ["name": .string("Mine")], "the local record stays")
        #expect(await server.row(kind: "pin", id: "p1") == othersRow)
        #expect(await server.appliedMutations == 0)
    }

    @Test("a read-back that fails transiently leaves the create queued without a permanent charge; the next attempt reads it and acknowledges")
    func transientReadFailureStaysRetryable() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer(remembersOperationIDs: false)
        var settings = FailureRig.Settings()
        settings.maximumPermanentFailures = 1
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server, settings: settings, start: false)
        try await rig.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        let create = try #require(try await rig.store.outboxOperations().first).id
        await rig.faulty.inject(.loseReply, on: .push)
        #expect(await rig.engine.sync().isRetryLater)

        await rig.faulty.inject(.transient(reason: "503 on read", retryAfter: nil), on: .read)
        #expect(await rig.engine.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(await server.reads == 0, "the read never reached the server")
        let entry = try #require(try await rig.entry(create))
        #expect(entry.permanentFailures == 0 && entry.lastFailure == .transient && !entry.quarantined)
        #expect(entry.attempts == 2)
        #expect(entry.lastError?.contains("could not read the row back") == true)

        await rig.clock.advance(byMilliseconds: RetryPolicy().maximumDelayMilliseconds)
        #expect(await rig.engine.sync() == .ok(pushed: 1, pulled: 0, conflicts: 0))
        #expect(await server.reads == 1)
        #expect(await server.appliedMutations == 1)
        #expect(try await rig.store.outboxOperations().isEmpty)
        #expect(try await rig.store.conflicts().isEmpty)
    }

    // MARK: Updates and deletes that matched no row

    @Test("an update answered noMatch with a readable newer row is a conflict (update/update) with that row")
    func updateNoMatchWithNewerRowIsAConflict() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer(remembersOperationIDs: false)
        let (rig, original) = try await Self.deviceWithSyncedP1(dir, server: server)
        let theirs = try #require(await server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs")]))
        #expect(theirs.updatedAt > original.updatedAt)
        let update = try await rig.store.update("pin", id: "p1", changes: ["name": .string("Mine")]).operation

        let outcome = await rig.engine.sync()
        #expect(outcome == .ok(pushed: 0, pulled: 1, conflicts: 1))
        #expect(await server.reads == 1)
        let conflict = try #require(try await rig.store.conflicts().first)
        #expect(conflict.id == update)
        #expect(conflict.shape == .bothUpdated)
        #expect(conflict.server == theirs)
        #expect(conflict.base == original.updatedAt)
        #expect(try await rig.store.record("pin", id: "p1")?.fields == ["name": .string("Theirs")])
        #expect(try await rig.store.quarantinedOperations().isEmpty)
        #expect(try await rig.store.outboxOperations().isEmpty)
    }

    enum LostRow: String, CaseIterable, Sendable { case deletedByAnotherWriter, givenToAnotherUser }

    @Test("an update answered noMatch with no readable row is \"deleted or no access\": quarantined at once with its own reason, and the device forgets its copy",
          arguments: LostRow.allCases)
    func updateNoMatchWithoutRowIsDeletedOrNoAccess(_ lost: LostRow) async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer(remembersOperationIDs: false)
        // No pulls: whatever the device forgets, it forgets because of the push.
        let (rig, _) = try await Self.deviceWithSyncedP1(dir, server: server, kinds: [])
        switch lost {
        case .deletedByAnotherWriter: await server.delete(kind: "pin", id: "p1")
        case .givenToAnotherUser: await server.write(user: "u2", kind: "pin", id: "p1", fields: ["name": .string("Cafe")])
        }
        let update = try await rig.store.update("pin", id: "p1", changes: ["name": .string("Mine")]).operation

        #expect(await rig.engine.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(await server.reads == 1)
        let entry = try #require(try await rig.entry(update))
        #expect(entry.quarantined, "quarantined at once, with a budget of 3")
        #expect(entry.lastFailure == .deletedOrNoAccess)
        #expect(entry.lastError?.contains("deleted or no access") == true)
        #expect(try await rig.store.quarantinedOperations().map(\.id) == [update])
        #expect(await rig.store.outcome(of: update).quarantinedOutboxEntry?.lastFailure == .deletedOrNoAccess)
        #expect(try await rig.store.record("pin", id: "p1") == nil, "the device forgets its copy")
        #expect(try await rig.store.currentState().snapshot[RecordKey(kind: "pin", id: "p1")] == nil)
        #expect(try await rig.store.conflicts().isEmpty)
        let status = try #require(try await rig.engine.outboxStatus().first)
        #expect(status.state == .quarantined && status.nextAttemptIn == nil)

        // Journaled: after a restart it is still quarantined and the copy still forgotten.
        let reopened = try await rig.reopen(start: false)
        #expect(try await reopened.store.quarantinedOperations().map(\.id) == [update])
        #expect(try await reopened.store.quarantinedOperations().first?.lastFailure == .deletedOrNoAccess)
        #expect(try await reopened.store.record("pin", id: "p1") == nil)
    }

    @Test("a delete answered noMatch with no readable row is acknowledged: the row is gone either way")
    func deleteNoMatchWithoutRowIsAcknowledged() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer(remembersOperationIDs: false)
        let (rig, _) = try await Self.deviceWithSyncedP1(dir, server: server)
        await server.delete(kind: "pin", id: "p1")
        let delete = try await rig.store.delete("pin", id: "p1").operation

        #expect(await rig.engine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await server.reads == 1)
        #expect(await rig.store.outcome(of: delete).wasAcknowledged)
        #expect(try await rig.store.outboxOperations().isEmpty)
        #expect(try await rig.store.quarantinedOperations().isEmpty)
        #expect(try await rig.store.conflicts().isEmpty)
        #expect(try await rig.store.record("pin", id: "p1") == nil)
    }

    @Test("a delete answered noMatch with a readable newer row is a conflict (delete/update): the record comes back with the server's copy")
    func deleteNoMatchWithNewerRowIsAConflict() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer(remembersOperationIDs: false)
        let (rig, _) = try await Self.deviceWithSyncedP1(dir, server: server)
        let theirs = try #require(await server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs")]))
        let delete = try await rig.store.delete("pin", id: "p1").operation

        #expect(await rig.engine.sync() == .ok(pushed: 0, pulled: 1, conflicts: 1))
        #expect(await server.reads == 1)
        let conflict = try #require(try await rig.store.conflicts().first)
        #expect(conflict.id == delete && conflict.shape == .deletedButUpdatedOnServer && conflict.server == theirs)
        #expect(try await rig.store.record("pin", id: "p1")?.fields == ["name": .string("Theirs")])
        #expect(await server.row(kind: "pin", id: "p1") == theirs)
    }
}

private extension SyncOutcome {
    var isOK: Bool { if case .ok = self { return true } else { return false } }
}

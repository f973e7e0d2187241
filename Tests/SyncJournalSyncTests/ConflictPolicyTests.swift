import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// Conflicts: one test per policy and per conflict shape, end to end
/// (LocalStore + SyncEngine + ReferenceServer as the other writer). Each
/// checks the ConflictRecord surfaced, the record shown after resolution,
/// what the server ends with, that the app is told (outcome(of:) and
/// changes()), and that replaying the journal reaches the same state.
@Suite("Conflicts: policies and shapes, end to end")
struct ConflictPolicyTests {
    static let key = RecordKey(kind: "pin", id: "p1")

    // MARK: Server wins (the default)

    @Test("server wins (default), update/update: the server's copy stays, every local field is reported lost, the app is told, replay agrees")
    func serverWinsBothUpdated() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        var scene = try await ConflictScene.make(dir)
        let theirs = try #require(await scene.server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs")]))
        let changes = await scene.store.changes()
        let op = try await scene.store.update("pin", id: "p1", changes: ["name": .string("Mine"), "rating": .int(5)]).operation
        let local = try await scene.queued(op)
        #expect(local.baseUpdatedAt == scene.base.updatedAt)

        #expect(await scene.device.sync() == .ok(pushed: 0, pulled: 1, conflicts: 1))
        let expected = ConflictRecord(operation: local, server: theirs, baseRow: scene.base,
                                      resolution: ConflictResolution(strategy: .serverWins, replacement: nil, lostFields: ["name", "rating"]))
        #expect(try await scene.store.conflicts() == [expected])
        #expect(expected.shape == .bothUpdated)
        #expect(try await scene.visible() == theirs.fields, "the local edit is dropped from the view")
        #expect(try await scene.store.outboxOperations().isEmpty)
        #expect(await scene.store.outcome(of: op) == .conflicted(expected))
        #expect(await scene.server.row(kind: "pin", id: "p1") == theirs, "the other writer's change is not overwritten")
        #expect(await scene.device.recorder.pushBatches.count == 1, "nothing requeued")

        try await scene.reopenAndCompare()
        #expect(conflictChanges(await drainChanges(changes)) == [expected], "changes() reported the conflict once")
        #expect(await scene.device.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0), "nothing is resent after a reopen")
        #expect(await scene.server.row(kind: "pin", id: "p1") == theirs)
        try await scene.store.close()
    }

    // MARK: Client wins

    @Test("client wins, update/update: the local change is requeued on the server's stamp, shown over the server's copy, and applied by the server")
    func clientWinsBothUpdated() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        var scene = try await ConflictScene.make(dir, policies: ["pin": .clientWins])
        let theirs = try #require(await scene.server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs"), "note": .string("theirs")]))
        let changes = await scene.store.changes()
        let op = try await scene.store.update("pin", id: "p1", changes: ["name": .string("Mine"), "rating": .int(5)]).operation
        let local = try await scene.queued(op)

        var replacementID: OperationID?
        let outcome = try await scene.syncInspectingRequeued {
            let conflict = try #require(try await scene.store.conflicts().first)
            #expect(conflict.operation == local && conflict.server == theirs && conflict.baseRow == scene.base)
            #expect(conflict.shape == .bothUpdated)
            #expect(conflict.resolution.strategy == .clientWins)
            #expect(conflict.resolution.lostFields.isEmpty)
            let replacement = try #require(conflict.resolution.replacement)
            replacementID = replacement.id
            #expect(replacement.id != op, "a requeued change is a new operation")
            #expect(replacement.kind == .update && replacement.key == Self.key)
            #expect(replacement.fields == local.fields)
            #expect(replacement.baseUpdatedAt == theirs.updatedAt, "the server's stamp is the new base")
            #expect(try await scene.store.outboxOperations().map(\.operation) == [replacement], "in the refused one's place")
            #expect(await scene.store.isInFlight(replacement.id))
            #expect(try await scene.store.currentState().snapshot[Self.key] == theirs)
            #expect(try await scene.visible() == theirs.fields.merging(local.fields) { _, mine in mine },
                    "the local change is shown on top of the server's copy")
            #expect(await scene.store.outcome(of: op) == .conflicted(conflict))
        }
        #expect(outcome == .ok(pushed: 1, pulled: 1, conflicts: 1))
        let requeued = try #require(replacementID)
        let sent = try #require(await scene.device.recorder.pushBatches.last?.first)
        #expect(sent.operationID == requeued && sent.baseUpdatedAt == theirs.updatedAt)

        let final = try #require(await scene.server.row(kind: "pin", id: "p1"))
        #expect(final.fields == ["name": .string("Mine"), "rating": .int(5), "tags": .stringSet(["food"]), "note": .string("theirs")],
                "the local change reapplied on the server's copy")
        #expect(final.updatedAt > theirs.updatedAt)
        #expect(await scene.store.outcome(of: requeued) == .acknowledged(final))
        #expect(try await scene.visible() == final.fields)
        #expect(try await scene.store.outboxOperations().isEmpty)

        try await scene.reopenAndCompare()
        let reported = await drainChanges(changes)
        #expect(conflictChanges(reported).map(\.id) == [op])
        #expect(reported.contains(.acknowledged(requeued, final)))
        try await scene.store.close()
    }

    @Test("client wins, delete/update: the delete is requeued on the server's stamp and the server deletes the row")
    func clientWinsDeletedButUpdatedOnServer() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        var scene = try await ConflictScene.make(dir, policies: ["pin": .clientWins])
        let theirs = try #require(await scene.server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs")]))
        let op = try await scene.store.delete("pin", id: "p1").operation
        let local = try await scene.queued(op)

        let outcome = try await scene.syncInspectingRequeued {
            let conflict = try #require(try await scene.store.conflicts().first)
            #expect(conflict.shape == .deletedButUpdatedOnServer)
            #expect(conflict.operation == local && conflict.server == theirs && conflict.baseRow == scene.base)
            #expect(conflict.resolution.strategy == .clientWins && conflict.resolution.lostFields.isEmpty)
            let replacement = try #require(conflict.resolution.replacement)
            #expect(replacement.kind == .delete && replacement.baseUpdatedAt == theirs.updatedAt && replacement.id != op)
            #expect(try await scene.visible() == nil, "still deleted in the view")
        }
        #expect(outcome == .ok(pushed: 1, pulled: 1, conflicts: 1))
        #expect(await scene.server.row(kind: "pin", id: "p1") == nil, "the server deleted it")
        #expect(await scene.server.rows(user: "u1", kind: "pin").isEmpty)
        #expect(try await scene.visible() == nil)
        #expect(try await scene.store.outboxOperations().isEmpty)
        try await scene.reopenAndCompare()
        try await scene.store.close()
    }

    @Test("client wins, update/delete: the record is re-created as the device showed it (a create without a base)")
    func clientWinsUpdatedButDeletedOnServer() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        var scene = try await ConflictScene.make(dir, policies: ["pin": .clientWins])
        #expect(await scene.server.delete(kind: "pin", id: "p1") != nil)
        let op = try await scene.store.update("pin", id: "p1", changes: ["name": .string("Mine")]).operation
        let local = try await scene.queued(op)
        let shown = scene.base.fields.merging(local.fields) { _, mine in mine }

        let outcome = try await scene.syncInspectingRequeued {
            let conflict = try #require(try await scene.store.conflicts().first)
            #expect(conflict.shape == .updatedButDeletedOnServer)
            #expect(conflict.server == nil && conflict.baseRow == scene.base && conflict.operation == local)
            #expect(conflict.resolution.strategy == .clientWins && conflict.resolution.lostFields.isEmpty)
            let replacement = try #require(conflict.resolution.replacement)
            #expect(replacement.kind == .create && replacement.baseUpdatedAt == nil)
            #expect(replacement.fields == shown, "the whole record as the device showed it, not only the changed field")
            #expect(try await scene.visible() == shown)
        }
        #expect(outcome == .ok(pushed: 1, pulled: 1, conflicts: 1))
        let final = try #require(await scene.server.row(kind: "pin", id: "p1"))
        #expect(final.fields == shown)
        #expect(try await scene.visible() == shown)
        #expect(try await scene.store.record("pin", id: "p1")?.serverUpdatedAt == final.updatedAt)
        try await scene.reopenAndCompare()
        try await scene.store.close()
    }

    // MARK: Merge fields

    @Test("merge fields, update/update: fields the server did not change merge, string sets unite, an overlapping scalar keeps the server's value and is reported lost")
    func mergeFieldsBothUpdated() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        var scene = try await ConflictScene.make(dir, policies: ["pin": .mergeFields])
        let theirs = try #require(await scene.server.update(kind: "pin", id: "p1", changes: [
            "name": .string("Theirs"), "tags": .stringSet(["food", "spanish"]),
        ]))
        let changes = await scene.store.changes()
        let op = try await scene.store.update("pin", id: "p1", changes: [
            "name": .string("Mine"), "tags": .stringSet(["food", "late-night"]), "rating": .int(5),
        ]).operation
        let local = try await scene.queued(op)
        let merged: [String: FieldValue] = [
            "name": .string("Theirs"), "tags": .stringSet(["food", "spanish", "late-night"]), "rating": .int(5),
        ]

        let outcome = try await scene.syncInspectingRequeued {
            let conflict = try #require(try await scene.store.conflicts().first)
            #expect(conflict.operation == local && conflict.server == theirs && conflict.baseRow == scene.base)
            #expect(conflict.shape == .bothUpdated)
            #expect(conflict.resolution.strategy == .mergeFields)
            #expect(conflict.resolution.lostFields == ["name"])
            let replacement = try #require(conflict.resolution.replacement)
            #expect(replacement.kind == .update && replacement.baseUpdatedAt == theirs.updatedAt)
            #expect(replacement.fields == ["tags": .stringSet(["food", "spanish", "late-night"]), "rating": .int(5)],
                    "only what the merge changes on the server's copy is requeued")
            #expect(try await scene.visible() == merged)
        }
        #expect(outcome == .ok(pushed: 1, pulled: 1, conflicts: 1))
        let final = try #require(await scene.server.row(kind: "pin", id: "p1"))
        #expect(final.fields == merged)
        #expect(try await scene.visible() == merged)
        let conflict = try #require(await scene.store.outcome(of: op).asConflict)
        #expect(conflict.resolution.lostFields == ["name"], "the app is told which fields lost")
        try await scene.reopenAndCompare()
        try await scene.reopenAndCompare(checkpointFirst: true)
        #expect(conflictChanges(await drainChanges(changes)) == [conflict])
        try await scene.store.close()
    }

    @Test("merge fields, set union: two writers adding to a set both keep their elements, reported as a merge, not a conflict; a set that adds nothing new requeues nothing")
    func mergeFieldsSetUnion() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        var scene = try await ConflictScene.make(dir, policies: ["pin": .mergeFields],
                                                 fields: ["tags": .stringSet(["food"]), "labels": .stringSet(["a"])])
        let theirs = try #require(await scene.server.update(kind: "pin", id: "p1", changes: [
            "tags": .stringSet(["food", "spanish"]), "labels": .stringSet(["a", "b", "c"]),
        ]))
        // tags: both added different elements; labels: the device's addition is already on the server.
        let op = try await scene.store.update("pin", id: "p1", changes: [
            "tags": .stringSet(["food", "late-night", "cheap"]), "labels": .stringSet(["a", "b"]),
        ]).operation
        #expect(await scene.device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0), "a merge that lost nothing is not a conflict")
        #expect(try await scene.store.conflicts().isEmpty)
        let conflict = try #require(try await scene.store.merges().first)
        #expect(conflict.id == op && conflict.isMerge)
        #expect(conflict.resolution.strategy == .mergeFields)
        #expect(conflict.resolution.lostFields.isEmpty, "a union loses nothing")
        let replacement = try #require(conflict.resolution.replacement)
        #expect(replacement.fields == ["tags": .stringSet(["food", "spanish", "late-night", "cheap"])],
                "labels' union equals the server's set: not requeued")
        #expect(replacement.baseUpdatedAt == theirs.updatedAt)
        let final = try #require(await scene.server.row(kind: "pin", id: "p1"))
        #expect(final.fields == ["tags": .stringSet(["food", "spanish", "late-night", "cheap"]), "labels": .stringSet(["a", "b", "c"])])
        #expect(try await scene.visible() == final.fields)
        try await scene.reopenAndCompare()
        try await scene.store.close()
    }

    @Test("a merge that lost nothing is listed as a merge through the sync that found it, survives a reopen, and the next sync dismisses it once its merged fields reached the server; the status never counts it")
    func mergeIsDismissedByTheNextSync() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        var scene = try await ConflictScene.make(dir, policies: ["pin": .mergeFields])
        _ = try #require(await scene.server.update(kind: "pin", id: "p1", changes: ["tags": .stringSet(["food", "spanish"])]))
        let op = try await scene.store.update("pin", id: "p1", changes: ["name": .string("Casa Lola")]).operation
        #expect(await scene.device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(try await scene.store.merges().map(\.id) == [op])
        #expect(try await scene.store.conflicts().isEmpty)
        #expect(await scene.device.engine.status.conflicts == 0)
        try await scene.reopenAndCompare()
        #expect(try await scene.store.merges().map(\.id) == [op], "a merge is journaled like a conflict")
        #expect(await scene.device.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(try await scene.store.merges().isEmpty, "its merged fields reached the server: nothing left to show")
        try await scene.reopenAndCompare()
        #expect(try await scene.store.merges().isEmpty)
        try await scene.store.close()
    }

    @Test("a merge whose merged fields are still queued is not dismissed by the next sync")
    func mergeStaysWhileItsFieldsAreQueued() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let scene = try await ConflictScene.make(dir, policies: ["pin": .mergeFields])
        _ = try #require(await scene.server.update(kind: "pin", id: "p1", changes: ["tags": .stringSet(["food", "spanish"])]))
        let op = try await scene.store.update("pin", id: "p1", changes: ["name": .string("Casa Lola")]).operation
        // The conflicting push is held; meanwhile the next push (the merged
        // fields') is set to fail, so they stay queued past this sync.
        let faulty = scene.device.faulty
        await faulty.holdNextRequest(.push)
        let device = scene.device
        let first = Task { await device.sync() }
        await faulty.waitUntilHeld()
        await faulty.inject(.transient(reason: "busy", retryAfter: nil), on: .push)
        await faulty.releaseHeld()
        guard case .retryLater = await first.value else { Issue.record("the merged fields' push was to fail"); return }
        let merge = try #require(try await scene.store.merges().first)
        #expect(merge.id == op)
        let replacement = try #require(merge.resolution.replacement)
        #expect(try await scene.store.outboxOperations().map(\.id) == [replacement.id])
        await faulty.inject(.transient(reason: "busy", retryAfter: nil), on: .push)
        guard case .retryLater = await scene.device.sync() else { Issue.record("the push was to fail again"); return }
        #expect(try await scene.store.merges().map(\.id) == [op], "still queued: the merge stays")
        #expect(await scene.device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(try await scene.store.merges().map(\.id) == [op], "dismissed only as the next sync starts")
        #expect(await scene.device.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(try await scene.store.merges().isEmpty)
        try await scene.store.close()
    }

    @Test("merge fields, set union only: when the union is the server's set, nothing is requeued or pushed again")
    func mergeFieldsUnionEqualToServerRequeuesNothing() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        var scene = try await ConflictScene.make(dir, policies: ["pin": .mergeFields])
        let theirs = try #require(await scene.server.update(kind: "pin", id: "p1", changes: ["tags": .stringSet(["food", "spanish", "late-night"])]))
        let op = try await scene.store.update("pin", id: "p1", changes: ["tags": .stringSet(["food", "late-night"])]).operation
        #expect(await scene.device.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        guard case .merged(let conflict) = await scene.store.outcome(of: op) else { Issue.record("expected a merge"); return }
        #expect(conflict.resolution == ConflictResolution(strategy: .mergeFields, replacement: nil, lostFields: []))
        #expect(await scene.device.recorder.pushBatches.count == 1)
        #expect(await scene.server.row(kind: "pin", id: "p1") == theirs)
        #expect(try await scene.visible() == theirs.fields)
        #expect(try await scene.store.outboxOperations().isEmpty)
        try await scene.reopenAndCompare()
        try await scene.store.close()
    }

    @Test("merge fields uses the base the device edited even after a pull moved the snapshot on: a field only the device changed is not lost")
    func mergeFieldsKeepsBaseAcrossPull() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        var scene = try await ConflictScene.make(dir, policies: ["pin": .mergeFields])
        let theirs = try #require(await scene.server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs")]))
        // A sync whose pull is held: the device edits p1 while its old copy is the base, then the pull lands.
        await scene.device.faulty.holdNextRequest(.pull)
        let device = scene.device
        let syncing = Task { await device.sync() }
        await scene.device.faulty.waitUntilHeld()
        let op = try await scene.store.update("pin", id: "p1", changes: ["name": .string("Mine"), "rating": .int(5)]).operation
        await scene.device.faulty.releaseHeld()
        #expect(await syncing.value == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(try await scene.store.currentState().snapshot[Self.key] == theirs)
        #expect(try await scene.store.currentState().baseRows[Self.key] == scene.base, "the edited copy is kept as the base")
        #expect(try await scene.queued(op).baseUpdatedAt == scene.base.updatedAt)
        try await scene.reopenAndCompare(checkpointFirst: true)

        #expect(await scene.device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 1))
        let conflict = try #require(try await scene.store.conflicts().first)
        #expect(conflict.id == op && conflict.baseRow == scene.base && conflict.server == theirs)
        #expect(conflict.resolution.lostFields == ["name"], "rating did not change on the server since the base: it merges")
        #expect(conflict.resolution.replacement?.fields == ["rating": .int(5)])
        #expect(await scene.server.row(kind: "pin", id: "p1")?.fields == ["name": .string("Theirs"), "rating": .int(5), "tags": .stringSet(["food"])])
        #expect(try await scene.store.currentState().baseRows.isEmpty, "the base copy is forgotten once nothing waits on it")
        try await scene.reopenAndCompare()
        try await scene.store.close()
    }

    @Test("merge fields on delete/update and update/delete acts as server wins (strategy merge-fields, nothing requeued)")
    func mergeFieldsOnDeleteShapesActsAsServerWins() async throws {
        // delete/update: the record comes back with the server's copy.
        do {
            let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
            var scene = try await ConflictScene.make(dir, policies: ["pin": .mergeFields])
            let theirs = try #require(await scene.server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs")]))
            let op = try await scene.store.delete("pin", id: "p1").operation
            #expect(await scene.device.sync() == .ok(pushed: 0, pulled: 1, conflicts: 1))
            let conflict = try #require(await scene.store.outcome(of: op).asConflict)
            #expect(conflict.shape == .deletedButUpdatedOnServer)
            #expect(conflict.resolution == ConflictResolution(strategy: .mergeFields, replacement: nil, lostFields: []))
            #expect(try await scene.visible() == theirs.fields)
            #expect(await scene.server.row(kind: "pin", id: "p1") == theirs)
            try await scene.reopenAndCompare()
            try await scene.store.close()
        }
        // update/delete: it stays deleted and the local fields are reported lost.
        do {
            let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
            var scene = try await ConflictScene.make(dir, policies: ["pin": .mergeFields])
            #expect(await scene.server.delete(kind: "pin", id: "p1") != nil)
            let op = try await scene.store.update("pin", id: "p1", changes: ["name": .string("Mine")]).operation
            #expect(await scene.device.sync() == .ok(pushed: 0, pulled: 1, conflicts: 1))
            let conflict = try #require(await scene.store.outcome(of: op).asConflict)
            #expect(conflict.shape == .updatedButDeletedOnServer)
            #expect(conflict.resolution == ConflictResolution(strategy: .mergeFields, replacement: nil, lostFields: ["name"]))
            #expect(try await scene.visible() == nil)
            #expect(await scene.server.row(kind: "pin", id: "p1") == nil)
            try await scene.reopenAndCompare()
            try await scene.store.close()
        }
    }

    // MARK: Custom

    @Test("custom resolver returning a record: it is given base, local and server copies, and the record it returns is what the server ends with")
    func customKeepsRecord() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let given = SharedSlot<ConflictInput>()
        let policy = ConflictPolicy.custom { input in
            given.set(input)
            var kept = input.server?.fields ?? [:]
            kept["name"] = .string("Mine + Theirs")
            kept["rating"] = input.local?["rating"]
            return .keep(kept)
        }
        var scene = try await ConflictScene.make(dir, policies: ["pin": policy])
        let theirs = try #require(await scene.server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs")]))
        let op = try await scene.store.update("pin", id: "p1", changes: ["name": .string("Mine"), "rating": .int(5)]).operation
        let local = try await scene.queued(op)

        #expect(await scene.device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 1))
        let input = try #require(given.value)
        #expect(input.operation == local)
        #expect(input.base == scene.base)
        #expect(input.server == theirs)
        #expect(input.local == scene.base.fields.merging(local.fields) { _, mine in mine })
        #expect(input.shape == .bothUpdated)

        let conflict = try #require(await scene.store.outcome(of: op).asConflict)
        #expect(conflict.resolution.strategy == .custom)
        #expect(conflict.resolution.lostFields.isEmpty, "the policy merged the name and kept the rating: no local value is gone")
        let replacement = try #require(conflict.resolution.replacement)
        #expect(replacement.kind == .update && replacement.baseUpdatedAt == theirs.updatedAt)
        #expect(replacement.fields == ["name": .string("Mine + Theirs"), "rating": .int(5)], "only fields that differ from the server's copy")
        let expected: [String: FieldValue] = ["name": .string("Mine + Theirs"), "rating": .int(5), "tags": .stringSet(["food"])]
        #expect(await scene.server.row(kind: "pin", id: "p1")?.fields == expected)
        #expect(try await scene.visible() == expected)
        try await scene.reopenAndCompare()
        #expect(try await scene.store.conflicts() == [conflict], "replay does not run the resolver again")
        try await scene.store.close()
    }

    @Test("custom resolver returning a delete: the delete is queued on the server's copy and the server deletes the row")
    func customReturnsDelete() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let calls = SharedLog<ConflictShape>()
        let policy = ConflictPolicy.custom { input in
            calls.append(input.shape)
            return .delete
        }
        var scene = try await ConflictScene.make(dir, policies: ["pin": policy])
        let theirs = try #require(await scene.server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs")]))
        let op = try await scene.store.update("pin", id: "p1", changes: ["name": .string("Mine")]).operation

        let outcome = try await scene.syncInspectingRequeued {
            let conflict = try #require(try await scene.store.conflicts().first)
            #expect(conflict.id == op && conflict.resolution.strategy == .custom && conflict.resolution.lostFields.isEmpty)
            let replacement = try #require(conflict.resolution.replacement)
            #expect(replacement.kind == .delete && replacement.baseUpdatedAt == theirs.updatedAt)
            #expect(try await scene.visible() == nil, "the record leaves the view at once")
        }
        #expect(outcome == .ok(pushed: 1, pulled: 1, conflicts: 1))
        #expect(calls.values == [.bothUpdated], "the resolver ran once")
        #expect(await scene.server.row(kind: "pin", id: "p1") == nil)
        #expect(try await scene.visible() == nil)
        #expect(try await scene.store.outboxOperations().isEmpty)
        try await scene.reopenAndCompare()
        #expect(calls.values.count == 1, "replay does not run the resolver again")
        try await scene.store.close()
    }

    @Test("custom resolver keeping a record the server deleted re-creates it")
    func customKeepsDeletedRecord() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let policy = ConflictPolicy.custom { input in input.local.map { .keep($0) } ?? .acceptServer }
        var scene = try await ConflictScene.make(dir, policies: ["pin": policy])
        #expect(await scene.server.delete(kind: "pin", id: "p1") != nil)
        let op = try await scene.store.update("pin", id: "p1", changes: ["name": .string("Mine")]).operation
        let shown = scene.base.fields.merging(["name": .string("Mine")]) { _, mine in mine }
        #expect(await scene.device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 1))
        let conflict = try #require(await scene.store.outcome(of: op).asConflict)
        #expect(conflict.shape == .updatedButDeletedOnServer)
        #expect(conflict.resolution.strategy == .custom && conflict.resolution.lostFields.isEmpty)
        #expect(conflict.resolution.replacement?.kind == .create)
        #expect(await scene.server.row(kind: "pin", id: "p1")?.fields == shown)
        #expect(try await scene.visible() == shown)
        try await scene.reopenAndCompare()
        try await scene.store.close()
    }

    // MARK: Shapes under the stated defaults

    @Test("default for delete/update (server wins): the record comes back with the server's copy, nothing is lost but the delete, the app is told")
    func defaultDeletedButUpdatedOnServer() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        var scene = try await ConflictScene.make(dir)
        let theirs = try #require(await scene.server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs")]))
        let changes = await scene.store.changes()
        let op = try await scene.store.delete("pin", id: "p1").operation
        let local = try await scene.queued(op)
        #expect(try await scene.visible() == nil)

        #expect(await scene.device.sync() == .ok(pushed: 0, pulled: 1, conflicts: 1))
        let expected = ConflictRecord(operation: local, server: theirs, baseRow: scene.base,
                                      resolution: ConflictResolution(strategy: .serverWins, replacement: nil, lostFields: []))
        #expect(expected.shape == .deletedButUpdatedOnServer)
        #expect(try await scene.store.conflicts() == [expected])
        #expect(await scene.store.outcome(of: op) == .conflicted(expected))
        #expect(try await scene.visible() == theirs.fields, "the record returns with the server's copy")
        #expect(await scene.server.row(kind: "pin", id: "p1") == theirs)
        #expect(try await scene.store.outboxOperations().isEmpty)
        try await scene.reopenAndCompare()
        #expect(conflictChanges(await drainChanges(changes)) == [expected])
        try await scene.store.close()
    }

    @Test("default for update/delete (server wins): the record stays deleted, the local fields are reported lost, the app is told")
    func defaultUpdatedButDeletedOnServer() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        var scene = try await ConflictScene.make(dir)
        #expect(await scene.server.delete(kind: "pin", id: "p1") != nil)
        let changes = await scene.store.changes()
        let op = try await scene.store.update("pin", id: "p1", changes: ["name": .string("Mine"), "rating": .int(4)]).operation
        let local = try await scene.queued(op)

        #expect(await scene.device.sync() == .ok(pushed: 0, pulled: 1, conflicts: 1))
        let expected = ConflictRecord(operation: local, server: nil, baseRow: scene.base,
                                      resolution: ConflictResolution(strategy: .serverWins, replacement: nil, lostFields: ["name", "rating"]))
        #expect(expected.shape == .updatedButDeletedOnServer)
        #expect(try await scene.store.conflicts() == [expected])
        #expect(await scene.store.outcome(of: op) == .conflicted(expected))
        #expect(try await scene.visible() == nil, "stays deleted")
        #expect(try await scene.store.currentState().snapshot[Self.key] == nil)
        #expect(await scene.server.row(kind: "pin", id: "p1") == nil)
        try await scene.reopenAndCompare()
        #expect(conflictChanges(await drainChanges(changes)) == [expected])
        try await scene.reopenAndCompare(checkpointFirst: true)
        try await scene.store.close()
    }

    @Test("policies are chosen per kind: in one sync a pin (client wins) is requeued and a note (default) keeps the server's copy")
    func policiesArePerKind() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        await server.write(user: "u1", kind: "pin", id: "p1", fields: ["name": .string("Cafe")])
        await server.write(user: "u1", kind: "note", id: "n1", fields: ["text": .string("hello")])
        let device = try await Device.open(dir.file("device.journal"), server: server, kinds: ["note", "pin"],
                                           conflictPolicies: ["pin": .clientWins])
        #expect(await device.sync() == .ok(pushed: 0, pulled: 2, conflicts: 0))
        await server.tick(10)
        await server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs")])
        let theirNote = try #require(await server.update(kind: "note", id: "n1", changes: ["text": .string("theirs")]))
        let pinOp = try await device.store.update("pin", id: "p1", changes: ["name": .string("Mine")]).operation
        let noteOp = try await device.store.update("note", id: "n1", changes: ["text": .string("mine")]).operation

        #expect(await device.sync() == .ok(pushed: 1, pulled: 2, conflicts: 2))
        #expect(await device.store.outcome(of: pinOp).asConflict?.resolution.strategy == .clientWins)
        #expect(await device.store.outcome(of: noteOp).asConflict?.resolution.strategy == .serverWins)
        #expect(await server.row(kind: "pin", id: "p1")?.fields == ["name": .string("Mine")])
        #expect(await server.row(kind: "note", id: "n1") == theirNote)
        #expect(try await device.store.record("note", id: "n1")?.fields == theirNote.fields)
        try await device.store.close()
    }

    // MARK: The app decides later

    @Test("resolveConflict keep, later: a record the server deleted is re-created as a create and the server gets it; the conflict leaves the list")
    func resolveConflictKeepAfterServerDelete() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        var scene = try await ConflictScene.make(dir)
        #expect(await scene.server.delete(kind: "pin", id: "p1") != nil)
        try await scene.store.update("pin", id: "p1", changes: ["name": .string("Mine")])
        #expect(await scene.device.sync() == .ok(pushed: 0, pulled: 1, conflicts: 1))
        let conflict = try #require(try await scene.store.conflicts().first)
        #expect(try await scene.visible() == nil)

        // The user picks "keep mine": the record as the device showed it.
        let mine = try #require(conflict.baseRow).fields.merging(conflict.operation.fields) { _, new in new }
        try await scene.store.resolveConflict(conflict.id, keeping: .keep(mine))
        #expect(try await scene.store.conflicts().isEmpty)
        let queued = try #require(try await scene.store.outboxOperations().first).operation
        #expect(queued.kind == .create && queued.fields == mine && queued.baseUpdatedAt == nil)
        #expect(try await scene.visible() == mine)
        try await scene.reopenAndCompare()

        #expect(await scene.device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await scene.server.row(kind: "pin", id: "p1")?.fields == mine)
        #expect(try await scene.store.outboxOperations().isEmpty)
        try await scene.store.close()
    }

    @Test("resolveConflict delete, later: after server wins brought the record back, the app deletes it on the server's stamp")
    func resolveConflictDeleteAfterServerWins() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        var scene = try await ConflictScene.make(dir)
        let theirs = try #require(await scene.server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs")]))
        try await scene.store.delete("pin", id: "p1")
        #expect(await scene.device.sync() == .ok(pushed: 0, pulled: 1, conflicts: 1))
        let conflict = try #require(try await scene.store.conflicts().first)
        #expect(try await scene.visible() == theirs.fields)

        try await scene.store.resolveConflict(conflict.id, keeping: .delete)
        #expect(try await scene.store.conflicts().isEmpty)
        let queued = try #require(try await scene.store.outboxOperations().first).operation
        #expect(queued.kind == .delete && queued.baseUpdatedAt == theirs.updatedAt)
        #expect(try await scene.visible() == nil)
        try await scene.reopenAndCompare()

        #expect(await scene.device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await scene.server.row(kind: "pin", id: "p1") == nil)
        try await scene.store.close()
    }

    @Test("resolveConflict acceptServer only dismisses: nothing is queued and the view keeps the server's copy")
    func resolveConflictAcceptServerOnlyDismisses() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        var scene = try await ConflictScene.make(dir)
        let theirs = try #require(await scene.server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs")]))
        try await scene.store.update("pin", id: "p1", changes: ["name": .string("Mine")])
        #expect(await scene.device.sync() == .ok(pushed: 0, pulled: 1, conflicts: 1))
        let conflict = try #require(try await scene.store.conflicts().first)
        try await scene.store.resolveConflict(conflict.id, keeping: .acceptServer)
        #expect(try await scene.store.conflicts().isEmpty)
        #expect(try await scene.store.outboxOperations().isEmpty)
        #expect(try await scene.visible() == theirs.fields)
        try await scene.reopenAndCompare()
        #expect(await scene.device.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        try await scene.store.close()
    }

    @Test("dismissConflict: the conflict leaves the list (also after a reopen) and its resolution stands; an unknown or dismissed conflict cannot be dismissed or resolved")
    func dismissConflictKeepsResolution() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        var scene = try await ConflictScene.make(dir, policies: ["pin": .clientWins])
        await scene.server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs")])
        let op = try await scene.store.update("pin", id: "p1", changes: ["name": .string("Mine")]).operation
        // The pushes fail after the conflict: the requeued change stays queued.
        await scene.device.faulty.inject(.hold, on: .push)
        await scene.device.faulty.inject(.transient(reason: "503", retryAfter: nil), on: .push)
        let device = scene.device
        let syncing = Task { await device.sync() }
        await device.faulty.waitUntilHeld()
        await device.faulty.releaseHeld()
        #expect(await syncing.value.isRetryLater)
        let conflict = try #require(try await scene.store.conflicts().first)
        let replacement = try #require(conflict.resolution.replacement)
        #expect(try await scene.store.outboxOperations().map(\.id) == [replacement.id])
        let shown = try await scene.visible()

        try await scene.store.dismissConflict(op)
        #expect(try await scene.store.conflicts().isEmpty)
        #expect(try await scene.store.outboxOperations().map(\.id) == [replacement.id], "the resolution stands")
        #expect(try await scene.visible() == shown)
        await #expect(throws: StoreError.conflictNotFound(op)) { try await scene.store.dismissConflict(op) }
        await #expect(throws: StoreError.conflictNotFound(op)) { try await scene.store.resolveConflict(op, keeping: .acceptServer) }
        try await scene.reopenAndCompare()
        #expect(try await scene.store.conflicts().isEmpty)

        #expect(await scene.device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await scene.server.row(kind: "pin", id: "p1")?.fields["name"] == .string("Mine"))
        try await scene.store.close()
    }
}

import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// Every per-mutation outcome and every transport error class reaches the
/// store as the engine's contract says: acknowledged, conflicted, failed or
/// left as it was.
@Suite("Sync engine: mutation outcomes and transport errors")
struct WireOutcomeTests {
    static let key = RecordKey(kind: "pin", id: "p1")

    /// A store whose snapshot holds p1 at stamp 100 (as if pulled), with the cursor after it.
    static func storeWithP1(_ dir: TemporaryDirectory) async throws -> LocalStore {
        let store = try await openStore(dir.file("device.journal"))
        let p1 = serverRow("p1", at: 100, ["name": .string("Cafe")])
        try await store.applyPulledPage(kind: "pin", rows: [p1], cursor: cursor(after: p1))
        return store
    }

    // MARK: Outcomes

    @Test("applied: the operation is acknowledged and the snapshot takes the server's copy")
    func appliedAcknowledgesAndUpdatesSnapshot() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        try await store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        let serverCopy = serverRow("p1", at: 777, ["name": .string("Cafe"), "owner": .string("u1")])
        let recorder = RecordingTransport(ScriptedTransport.answering { _ in .applied(serverCopy) })
        let engine = SyncEngine(store: store, transport: recorder, options: .init(kinds: ["pin"]))

        #expect(await engine.sync() == .ok(pushed: 1, pulled: 0, conflicts: 0))
        #expect(try await store.outboxOperations().isEmpty)
        let state = try await store.currentState()
        #expect(state.snapshot[Self.key] == serverCopy)
        let record = try #require(try await store.record("pin", id: "p1"))
        #expect(record.serverUpdatedAt == 777)
        #expect(record.hasPendingChanges == false)
        #expect(record.fields == serverCopy.fields)
        #expect(state.conflicts.isEmpty && state.rejections.isEmpty)
        #expect(await recorder.order == ["push", "pull"])
    }

    @Test("applied delete: the tombstone removes the record from the snapshot")
    func appliedDeleteRemovesFromSnapshot() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await Self.storeWithP1(dir)
        try await store.delete("pin", id: "p1")
        let tombstone = ServerRow(kind: "pin", id: "p1", updatedAt: 200, deletedAt: 200)
        let engine = SyncEngine(store: store, transport: ScriptedTransport.answering { _ in .applied(tombstone) },
                                options: .init(kinds: ["pin"]))
        #expect(await engine.sync() == .ok(pushed: 1, pulled: 0, conflicts: 0))
        #expect(try await store.currentState().snapshot[Self.key] == nil)
        #expect(try await store.record("pin", id: "p1") == nil)
        #expect(try await store.outboxOperations().isEmpty)
    }

    @Test("conflict with a server copy: surfaced as a ConflictRecord with the base the device edited, and the server's copy is kept (server wins)")
    func conflictWithServerCopyIsSurfacedAndKept() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await Self.storeWithP1(dir)
        let base = try #require(try await store.currentState().snapshot[Self.key])
        try await store.update("pin", id: "p1", changes: ["name": .string("Mine")])
        let operation = try #require(try await store.outboxOperations().first).operation
        #expect(operation.baseUpdatedAt == 100)
        let theirs = serverRow("p1", at: 150, ["name": .string("Theirs")])
        let engine = SyncEngine(store: store, transport: ScriptedTransport.answering { _ in .conflict(server: theirs) },
                                options: .init(kinds: ["pin"]))

        #expect(await engine.sync() == .ok(pushed: 0, pulled: 0, conflicts: 1))
        let expected = ConflictRecord(operation: operation, server: theirs, baseRow: base,
                                      resolution: ConflictResolution(strategy: .serverWins, replacement: nil, lostFields: ["name"]))
        #expect(try await store.conflicts() == [expected])
        #expect(try await store.conflicts().first?.base == 100)
        #expect(try await store.conflicts().first?.shape == .bothUpdated)
        #expect(try await store.currentState().snapshot[Self.key] == theirs)
        #expect(try await store.record("pin", id: "p1")?.fields == ["name": .string("Theirs")])
        #expect(try await store.outboxOperations().isEmpty)
    }

    @Test("conflict without a server copy (the server deleted it): surfaced with nil and the local copy goes (server wins)")
    func conflictWithoutServerCopyIsSurfaced() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await Self.storeWithP1(dir)
        let base = try #require(try await store.currentState().snapshot[Self.key])
        try await store.update("pin", id: "p1", changes: ["name": .string("Mine")])
        let operation = try #require(try await store.outboxOperations().first).operation
        let engine = SyncEngine(store: store, transport: ScriptedTransport.answering { _ in .conflict(server: nil) },
                                options: .init(kinds: ["pin"]))

        #expect(await engine.sync() == .ok(pushed: 0, pulled: 0, conflicts: 1))
        let expected = ConflictRecord(operation: operation, server: nil, baseRow: base,
                                      resolution: ConflictResolution(strategy: .serverWins, replacement: nil, lostFields: ["name"]))
        #expect(try await store.conflicts() == [expected])
        #expect(try await store.conflicts().first?.shape == .updatedButDeletedOnServer)
        #expect(try await store.currentState().snapshot[Self.key] == nil)
        #expect(try await store.record("pin", id: "p1") == nil)
        #expect(try await store.outboxOperations().isEmpty)
    }

    @Test("rejected permanently: counted and kept queued with a backoff; the third permanent failure quarantines it and the view drops the edit")
    func permanentRejectionIsCountedThenQuarantined() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        try await store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        let operation = try #require(try await store.outboxOperations().first).operation
        let clock = ManualClock()
        let recorder = RecordingTransport(ScriptedTransport.answering { _ in .rejected(reason: "forbidden", permanent: true) })
        let engine = SyncEngine(store: store, transport: recorder, options: .init(kinds: ["pin"], jitterSeed: 7), clock: clock)

        #expect(await engine.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        var entry = try #require(try await store.outboxOperations().first)
        #expect(entry.id == operation.id)
        #expect(entry.attempts == 1 && entry.permanentFailures == 1)
        #expect(entry.lastFailure == .permanent && entry.lastError == "forbidden")
        #expect(!entry.quarantined)
        #expect(try await store.rejections().isEmpty, "no longer dropped into rejections()")
        #expect(try await store.record("pin", id: "p1")?.fields == ["name": .string("Cafe")], "still shown while it may pass")

        // Its own backoff: the very next sync does not resend it.
        #expect(await engine.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(await recorder.pushBatches.count == 1)

        // Past the backoff it is tried again, and the third failure quarantines it.
        for failures in 2...3 {
            await clock.advance(byMilliseconds: RetryPolicy().maximumDelayMilliseconds)
            #expect(await engine.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
            #expect(await recorder.pushBatches.count == failures)
            entry = try #require(try await store.outboxOperations().first)
            #expect(entry.permanentFailures == failures)
        }
        #expect(entry.quarantined)
        #expect(try await store.quarantinedOperations().map(\.id) == [operation.id])
        #expect(try await store.record("pin", id: "p1") == nil, "the view returns to the server's copy: none")
        #expect(try await store.conflicts().isEmpty)

        // Quarantined: never sent again until the app decides.
        await clock.advance(byMilliseconds: RetryPolicy().maximumDelayMilliseconds)
        #expect(await engine.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(await recorder.pushBatches.count == 3)
    }

    @Test("rejected transiently: attempts + 1, no permanent failure, the operation stays queued and is resent only after its backoff")
    func transientRejectionKeepsOperationQueued() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        try await store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        let clock = ManualClock()
        let recorder = RecordingTransport(ScriptedTransport.answering { _ in .rejected(reason: "overloaded", permanent: false) })
        let engine = SyncEngine(store: store, transport: recorder, options: .init(kinds: ["pin"], jitterSeed: 7), clock: clock)

        #expect(await engine.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        let entry = try #require(try await store.outboxOperations().first)
        #expect(try await store.outboxOperations().count == 1)
        #expect(entry.attempts == 1)
        #expect(entry.permanentFailures == 0)
        #expect(entry.lastFailure == .transient)
        #expect(entry.lastError == "overloaded")
        #expect(entry.sent)
        #expect(try await store.rejections().isEmpty)
        #expect(await recorder.pushBatches.count == 1, "a transiently rejected operation is not resent in the same sync")

        // The next sync at the same instant leaves it to its backoff
        // (at most the base delay after one failure)...
        #expect(await engine.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(await recorder.pushBatches.count == 1, "not resent before its backoff")
        let status = try #require(try await engine.outboxStatus().first)
        let wait = try #require(status.nextAttemptIn)
        #expect(wait > .zero && wait <= RetryPolicy().baseDelay)

        // ...and one after it tries it again.
        await clock.advance(by: wait)
        _ = await engine.sync()
        #expect(await recorder.pushBatches.count == 2)
        #expect(try await store.outboxOperations().first?.attempts == 2)
        #expect(try await store.outboxOperations().first?.permanentFailures == 0)
    }

    @Test("a transient rejection holds back the rest of its record's queue in that sync")
    func transientRejectionHoldsBackItsRecord() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await Self.storeWithP1(dir)
        try await store.update("pin", id: "p1", changes: ["name": .string("A")])
        // Mark the update sent so the next edit queues behind it instead of merging.
        let first = try #require(try await store.outboxOperations().first)
        try await store.beginSending([first.id])
        await store.finishSending([first.id])
        try await store.update("pin", id: "p1", changes: ["name": .string("B")])
        #expect(try await store.outboxOperations().count == 2)
        let recorder = RecordingTransport(ScriptedTransport.answering { _ in .rejected(reason: "busy", permanent: false) })
        let engine = SyncEngine(store: store, transport: recorder, options: .init(kinds: ["pin"]))

        #expect(await engine.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(await recorder.pushBatches.map { $0.map(\.operationID) } == [[first.id]])
        #expect(try await store.outboxOperations().count == 2)
    }

    // MARK: Transport errors

    @Test("offline with nothing queued: skipped, and the state and journal do not change")
    func offlineWithEmptyOutboxChangesNothing() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await Self.storeWithP1(dir)
        let faulty = FaultInjectingTransport(ScriptedTransport())
        await faulty.setOffline(true)
        let engine = SyncEngine(store: store, transport: faulty, options: .init(kinds: ["pin"]))
        let before = try await store.currentState()
        let sizeBefore = try fileSize(store.path)

        #expect(await engine.sync() == .skipped(.offline))
        #expect(try await store.currentState() == before)
        #expect(try fileSize(store.path) == sizeBefore)
        #expect(try await store.record("pin", id: "p1")?.fields == ["name": .string("Cafe")], "the view keeps its data")
    }

    @Test("offline with queued edits: skipped, and the state and journal do not change")
    func offlineWithQueuedEditsChangesNothing() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await Self.storeWithP1(dir)
        try await store.update("pin", id: "p1", changes: ["name": .string("Mine")])
        try await store.create("pin", id: "p2", fields: ["name": .string("Museum")])
        let faulty = FaultInjectingTransport(ScriptedTransport())
        await faulty.setOffline(true)
        let engine = SyncEngine(store: store, transport: faulty, options: .init(kinds: ["pin"]))
        let before = try await store.currentState()
        let sizeBefore = try fileSize(store.path)

        #expect(await engine.sync() == .skipped(.offline))
        // The view and the queue are intact either way.
        #expect(try await store.outboxOperations().map(\.operation) == before.outbox.operations.map(\.operation))
        #expect(try await store.outboxOperations().allSatisfy { $0.attempts == 0 })
        #expect(try await store.record("pin", id: "p1")?.fields == ["name": .string("Mine")])
        #expect(try await store.record("pin", id: "p2")?.fields == ["name": .string("Museum")])
        // Offline is a skipped sync and nothing changes. The sent marker must
        // be durable before a request may leave, so the engine journals it,
        // learns the request never left, and journals its withdrawal: the
        // state (sent flags included) is exactly as before; the journal holds
        // the two small records of the attempt.
        #expect(try await store.currentState() == before)
        #expect(try await store.outboxOperations().allSatisfy { !$0.sent })
        #expect(try fileSize(store.path) >= sizeBefore)
        let types = try JournalReader(path: store.path).readAll().records.suffix(2).map(\.type)
        #expect(types == [.sentMarker, .sendWithdrawn])
        // A second offline attempt leaves the state as it was too.
        #expect(await engine.sync() == .skipped(.offline))
        #expect(try await store.currentState() == before)
    }

    @Test("offline on the pull: skipped, the snapshot and cursor stay")
    func offlineOnPullIsSkipped() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await Self.storeWithP1(dir)
        let faulty = FaultInjectingTransport(ScriptedTransport())
        await faulty.inject(.offline, on: .pull)
        let engine = SyncEngine(store: store, transport: faulty, options: .init(kinds: ["pin"]))
        let before = try await store.currentState()
        let sizeBefore = try fileSize(store.path)
        #expect(await engine.sync() == .skipped(.offline))
        #expect(try await store.currentState() == before)
        #expect(try fileSize(store.path) == sizeBefore)
    }

    @Test("a transient push error: retry later with the server's retry-after, the operation stays queued with attempts + 1 and no permanent failure")
    func transientPushErrorKeepsOperationQueued() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        try await store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        let faulty = FaultInjectingTransport(ScriptedTransport())
        await faulty.inject(.transient(reason: "503 service unavailable", retryAfter: .milliseconds(2_000)), on: .push)
        let engine = SyncEngine(store: store, transport: faulty, options: .init(kinds: ["pin"]))

        let outcome = await engine.sync()
        #expect(outcome == .retryLater(reason: "503 service unavailable", retryAfter: .milliseconds(2_000)))
        let entry = try #require(try await store.outboxOperations().first)
        #expect(entry.attempts == 1)
        #expect(entry.permanentFailures == 0)
        #expect(entry.lastFailure == .transient)
        #expect(!entry.quarantined)
        #expect(entry.lastError == "503 service unavailable")
        #expect(try await store.rejections().isEmpty)
        #expect(await store.isInFlight(entry.id) == false)
        #expect(await faulty.requestCount == 1, "a failed push stops the sync: no pull after it")
    }

    @Test("a permanent push error: error outcome, the operation is not lost and not charged")
    func permanentPushErrorIsAnError() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        try await store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        let operation = try #require(try await store.outboxOperations().first).operation
        let faulty = FaultInjectingTransport(ScriptedTransport())
        await faulty.inject(.permanent(reason: "400 bad request"), on: .push)
        let engine = SyncEngine(store: store, transport: faulty, options: .init(kinds: ["pin"]))

        let outcome = await engine.sync()
        #expect(outcome.isError)
        #expect(outcome.failure == .transport(.permanent(reason: "400 bad request")))
        let queued = try await store.outboxOperations().map(\.operation)
        let rejected = try await store.rejections().map(\.operation)
        #expect(queued + rejected == [operation], "never silently dropped")
        #expect(await store.isInFlight(operation.id) == false)
        let entry = try #require(try await store.outboxOperations().first)
        #expect(entry.permanentFailures == 0, "the whole request was refused: no operation is to blame")
        #expect(!entry.quarantined)
    }

    @Test("a transient pull error is retry-later (with its retry-after), a permanent one an error; both keep the snapshot and cursor",
          arguments: [TransportError.transient(reason: "429 too many requests", retryAfter: .milliseconds(500)),
                      .permanent(reason: "403 forbidden")])
    func pullErrorsKeepSnapshot(_ failure: TransportError) async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await Self.storeWithP1(dir)
        let engine = SyncEngine(store: store, transport: ScriptedTransport(onPull: { _ throws(TransportError) in throw failure }),
                                options: .init(kinds: ["pin"]))
        let before = try await store.currentState()
        let outcome = await engine.sync()
        switch failure {
        case .transient(let reason, let after): #expect(outcome == .retryLater(reason: reason, retryAfter: after))
        default: #expect(outcome == .failed(.transport(failure)))
        }
        #expect(try await store.currentState() == before)
    }

    // MARK: Malformed push replies

    @Test("a push reply with a missing result is an error and acknowledges nothing")
    func pushReplyWithMissingResultIsAnError() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        try await store.create("pin", id: "p1", fields: ["name": .string("A")])
        try await store.create("pin", id: "p2", fields: ["name": .string("B")])
        let engine = SyncEngine(store: store, transport: ScriptedTransport(onPush: { mutations throws(TransportError) in
            [MutationResult(operationID: mutations[0].operationID, outcome: .applied(serverRow(mutations[0].recordID, at: 5)))]
        }), options: .init(kinds: ["pin"]))

        let outcome = await engine.sync()
        #expect(outcome.failure == .malformedReply(.pushResultsMismatch(results: 1, mutations: 2)))
        #expect(try await store.outboxOperations().count == 2)
        #expect(try await store.currentState().snapshot.isEmpty)
        for entry in try await store.outboxOperations() { #expect(await store.isInFlight(entry.id) == false) }
    }

    @Test("an acknowledgement carrying another record's row is an error and acknowledges nothing")
    func acknowledgementForAnotherRecordIsAnError() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        try await store.create("pin", id: "p1", fields: ["name": .string("A")])
        let engine = SyncEngine(store: store, transport: ScriptedTransport.answering { _ in .applied(serverRow("other", at: 5)) },
                                options: .init(kinds: ["pin"]))
        #expect(await engine.sync().isError)
        #expect(try await store.outboxOperations().count == 1)
        #expect(try await store.currentState().snapshot.isEmpty)
    }

    @Test("a push reply is checked whole: one bad result keeps none of the others")
    func pushReplyIsCheckedWholeBeforeAnythingIsKept() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        try await store.create("pin", id: "p1", fields: ["name": .string("A")])
        try await store.create("pin", id: "p2", fields: ["name": .string("B")])
        // p1 is rejected for good (a well-formed result); p2's acknowledgement
        // names another record (malformed). The engine says "a reply is
        // checked whole before any of it is kept".
        let engine = SyncEngine(store: store, transport: ScriptedTransport(onPush: { mutations throws(TransportError) in
            mutations.map { mutation in
                MutationResult(operationID: mutation.operationID,
                               outcome: mutation.recordID == "p1" ? .rejected(reason: "forbidden", permanent: true)
                                                                  : .applied(serverRow("somebody-else", at: 9)))
            }
        }), options: .init(kinds: ["pin"]))

        #expect(await engine.sync().isError)
        #expect(try await store.currentState().snapshot.isEmpty)
        #expect(try await store.rejections().isEmpty)
        #expect(try await store.outboxOperations().count == 2)
    }
}

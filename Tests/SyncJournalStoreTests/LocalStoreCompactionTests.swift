import SyncJournalProtocol
import Foundation
import SyncJournalCore
import SyncJournalStore
import Testing

// The compactor's rules through the store's
// API, with a request held open and with a crash while a request was open.
// Every decision is journaled, so replay reaches the same queue.

@Suite("LocalStore: compactor rules")
struct LocalStoreCompactionTests {
    typealias Kit = StoreRulesKit

    /// Closes `store`, reopens it on the same journal, checks the replayed
    /// state equals the live one, and returns the reopened store.
    static func reopen(_ store: LocalStore, sourceLocation: SourceLocation = #_sourceLocation) async throws -> LocalStore {
        let live = try await store.currentState()
        try await store.close()
        let reopened = try await Kit.open(store.path)
        #expect(try await reopened.currentState() == live, "replay reaches the same queue", sourceLocation: sourceLocation)
        return reopened
    }

    static func compactedEdits(_ path: String) throws -> [StoreEvent] {
        try Kit.records(path).filter { $0.type == RecordType.compactedEdit }.compactMap { try StoreEvent.decode($0) }
    }

    @Test("compactor: create never sent + delete → both vanish: the outbox is empty, nothing is offered to send, and the decision is journaled")
    func unsentCreateAndDeleteVanish() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "a", fields: ["name": .string("Tapas bar")])
            try await store.delete("pin", id: "a")
            #expect(try await store.outboxOperations().isEmpty)
            #expect(try await store.operationsReadyToSend(limit: 10).isEmpty)
            #expect(try await store.record("pin", id: "a") == nil)
            #expect(try await store.records("pin").isEmpty)

            let compacted = try Self.compactedEdits(scratch.journal)
            #expect(compacted.count == 1)
            if case .edit(let delete, let steps)? = compacted.first {
                #expect(delete.kind == .delete)
                #expect(steps.count == 2)
            }
            let reopened = try await Self.reopen(store)
            #expect(try await reopened.outboxOperations().isEmpty)
            try await reopened.close()
        }
    }

    @Test("compactor: create in flight + delete → the delete stays queued and is not offered until the create's outcome (acknowledge) arrives, then it is offered")
    func createInFlightAndDeleteWaitsForOutcome() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "a", fields: ["name": .string("Tapas bar")])
            let create = try #require(try await store.operationsReadyToSend(limit: 10).first)
            try await store.beginSending([create.id])  // the request is open

            try await store.delete("pin", id: "a")
            let queued = try await store.outboxOperations()
            #expect(queued.map(\.operation.kind) == [.create, .delete])
            #expect(queued.first?.operation == create.operation, "the in-flight create is untouched")
            #expect(try await store.record("pin", id: "a") == nil, "the app sees the deletion at once")
            #expect(try await store.operationsReadyToSend(limit: 10).isEmpty, "the delete waits for the create's outcome")

            // The transport finished without an outcome (timeout): the create is offered again, still not the delete.
            await store.finishSending([create.id])
            #expect(try await store.operationsReadyToSend(limit: 10).map(\.id) == [create.id])

            // The outcome arrives: the server created it (stamp 500).
            try await store.beginSending([create.id])
            try await store.deliverAcknowledgements([Acknowledgement(operationID: create.id, row: Kit.row("a", at: 500, ["name": .string("Tapas bar")]))])
            await store.finishSending([create.id])
            let ready = try await store.operationsReadyToSend(limit: 10)
            #expect(ready.map(\.operation.kind) == [.delete])
            #expect(ready.first?.operation.baseUpdatedAt == 500)
            #expect(try await store.record("pin", id: "a") == nil, "still deleted: the acknowledged row does not resurrect it")

            let reopened = try await Self.reopen(store)
            #expect(try await reopened.record("pin", id: "a") == nil)
            try await reopened.close()
        }
    }

    /// How the process stopped while the create's request was open.
    enum Stop: String, CaseIterable, Sendable {
        /// The app closed the store without a reply.
        case closed
        /// The process died: only what the journal held survives (a copy of the file, taken while the store was open).
        case crashed
    }

    @Test("compactor: after a crash while the create's request was open, the create is sent-but-unacknowledged, and a delete stays queued behind it until its outcome",
          arguments: Stop.allCases)
    func crashWhileCreateInFlightThenDelete(stop: Stop) async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "a", fields: ["name": .string("Tapas bar")])
            let create = try #require(try await store.operationsReadyToSend(limit: 10).first)
            try await store.beginSending([create.id])

            let path: String
            switch stop {
            case .closed:
                try await store.close()
                path = scratch.journal
            case .crashed:
                path = scratch.file("after-crash.journal")
                try FileManager.default.copyItem(atPath: scratch.journal, toPath: path)
            }

            let reopened = try await Kit.open(path)
            #expect(await reopened.isInFlight(create.id) == false)
            #expect(try await reopened.outboxOperations().map(\.sent) == [true])
            #expect(try await reopened.record("pin", id: "a") != nil)

            try await reopened.delete("pin", id: "a")
            #expect(try await reopened.outboxOperations().map(\.operation.kind) == [.create, .delete])
            #expect(try await reopened.record("pin", id: "a") == nil)
            // The create may have reached the server: it is resent, the delete waits.
            #expect(try await reopened.operationsReadyToSend(limit: 10).map(\.id) == [create.id])
            try await reopened.beginSending([create.id])
            #expect(try await reopened.operationsReadyToSend(limit: 10).isEmpty)
            try await reopened.deliverAcknowledgements([Acknowledgement(operationID: create.id, row: Kit.row("a", at: 600, ["name": .string("Tapas bar")]))])
            await reopened.finishSending([create.id])
            #expect(try await reopened.operationsReadyToSend(limit: 10).map(\.operation.kind) == [.delete])

            let third = try await Self.reopen(reopened)
            #expect(try await third.outboxOperations().map(\.operation.kind) == [.delete])
            try await third.close()
            if stop == .crashed { try await store.close() }
        }
    }

    @Test("compactor: create never sent + updates → one create with the merged fields, journaled as compacted edits")
    func unsentCreateAbsorbsUpdates() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "a", fields: ["name": .string("Cafe"), "rating": .int(3)])
            let create = try #require(try await store.outboxOperations().first)
            try await store.update("pin", id: "a", changes: ["rating": .int(4)])
            try await store.update("pin", id: "a", changes: ["rating": .int(5), "visited": .bool(true)])
            let ops = try await store.outboxOperations()
            #expect(ops.count == 1)
            #expect(ops.first?.id == create.id)
            #expect(ops.first?.operation.kind == .create)
            #expect(ops.first?.operation.fields == ["name": .string("Cafe"), "rating": .int(5), "visited": .bool(true)])
            #expect(ops.first?.operation.baseUpdatedAt == nil)
            #expect(try Self.compactedEdits(scratch.journal).count == 2)
            let reopened = try await Self.reopen(store)
            try await reopened.close()
        }
    }

    @Test("compactor: update + update, neither sent → one update with the merged changes and the FIRST update's base")
    func unsentUpdatesMergeWithFirstBase() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100, ["name": .string("Cafe")])], cursor: nil)
            try await store.update("pin", id: "a", changes: ["name": .string("One"), "rating": .int(1)])
            let first = try #require(try await store.outboxOperations().first)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 200, ["name": .string("Server")])], cursor: nil)
            try await store.update("pin", id: "a", changes: ["rating": .int(2)])
            let ops = try await store.outboxOperations()
            #expect(ops.count == 1)
            #expect(ops.first?.id == first.id)
            #expect(ops.first?.operation.fields == ["name": .string("One"), "rating": .int(2)])
            #expect(ops.first?.operation.baseUpdatedAt == 100)
            #expect(try Self.compactedEdits(scratch.journal).count == 1)
            let reopened = try await Self.reopen(store)
            try await reopened.close()
        }
    }

    @Test("compactor: update never sent + delete → one delete carrying the update's base")
    func unsentUpdateAndDeleteBecomeOneDelete() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100, ["name": .string("Cafe")])], cursor: nil)
            try await store.update("pin", id: "a", changes: ["name": .string("One")])
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 200, ["name": .string("Server")])], cursor: nil)
            try await store.delete("pin", id: "a")
            let ops = try await store.outboxOperations()
            #expect(ops.map(\.operation.kind) == [.delete])
            #expect(ops.first?.operation.baseUpdatedAt == 100, "the delete is aimed at the copy the update was made on")
            #expect(ops.first?.operation.fields.isEmpty == true)
            #expect(try await store.record("pin", id: "a") == nil)
            #expect(try Self.compactedEdits(scratch.journal).count == 1)
            let reopened = try await Self.reopen(store)
            try await reopened.close()
        }
    }

    @Test("compactor: edits made while a request is in flight queue behind it and are not merged into it")
    func editsWhileInFlightQueueBehind() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100, ["name": .string("Cafe")])], cursor: nil)
            try await store.update("pin", id: "a", changes: ["name": .string("One")])
            let inFlight = try #require(try await store.outboxOperations().first)
            try await store.beginSending([inFlight.id])

            try await store.update("pin", id: "a", changes: ["name": .string("Two")])
            try await store.update("pin", id: "a", changes: ["rating": .int(4)])
            var ops = try await store.outboxOperations()
            #expect(ops.count == 2)
            #expect(ops.first?.operation == inFlight.operation, "the request's operation is exactly what was handed to the transport")
            #expect(ops.last?.operation.fields == ["name": .string("Two"), "rating": .int(4)], "later edits merge with each other")
            #expect(try await store.record("pin", id: "a")?.fields == ["name": .string("Two"), "rating": .int(4)])
            #expect(try await store.operationsReadyToSend(limit: 10).isEmpty)

            try await store.delete("pin", id: "a")
            ops = try await store.outboxOperations()
            #expect(ops.map(\.operation.kind) == [.update, .delete])
            #expect(ops.first?.operation == inFlight.operation)

            let reopened = try await Self.reopen(store)
            try await reopened.close()
        }
    }

    @Test("compactor: every compaction decision is journaled: replay from the journal reaches the same outbox as the live store")
    func everyDecisionIsJournaled() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("s1", at: 100), Kit.row("s2", at: 200)], cursor: nil)
            try await store.create("pin", id: "c1", fields: ["n": .int(1)])
            try await store.update("pin", id: "c1", changes: ["n": .int(2)])            // create + update
            try await store.update("pin", id: "s1", changes: ["x": .int(1)])
            try await store.update("pin", id: "s1", changes: ["y": .int(2)])            // update + update
            try await store.update("pin", id: "s2", changes: ["x": .int(1)])
            try await store.delete("pin", id: "s2")                                      // update + delete
            try await store.create("pin", id: "c2", fields: [:])
            try await store.delete("pin", id: "c2")                                      // create + delete
            let c3 = try await store.create("pin", fields: [:]).id
            let sent = try #require(try await store.outboxOperations().last)
            try await store.beginSending([sent.id])
            try await store.update("pin", id: c3, changes: ["later": .bool(true)])       // behind a sent create: not compacted

            let records = try Kit.records(scratch.journal)
            #expect(records.filter { $0.type == RecordType.compactedEdit }.count == 4)
            // Replaying the journal alone (no store) gives the live state.
            let live = try await store.currentState()
            #expect(try Replayer.replay(path: scratch.journal).state == live)
            #expect(live.outbox.operations.map(\.operation.recordID) == ["c1", "s1", "s2", c3, c3])
            let reopened = try await Self.reopen(store)
            #expect(try await reopened.outboxOperations() == live.outbox.operations)
            try await reopened.close()
        }
    }
}

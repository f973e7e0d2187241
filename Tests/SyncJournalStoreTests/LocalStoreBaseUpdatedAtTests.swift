import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import Testing

// The base is the version actually edited: baseUpdatedAt is the server stamp
// of the copy the device had before its first local edit; a local time never
// becomes a base; a record created here has no base until the server
// confirms it.

@Suite("LocalStore: baseUpdatedAt")
struct LocalStoreBaseUpdatedAtTests {
    typealias Kit = StoreRulesKit

    static func pending(_ store: LocalStore, _ id: String) async throws -> [OutboxOperation] {
        try await store.outboxOperations().filter { $0.operation.recordID == id }
    }

    @Test("baseUpdatedAt: an update or delete of a server record carries the snapshot's updatedAt, and queuedAt comes from the injected clock")
    func baseIsTheSnapshotStamp() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100, ["name": .string("Cafe")]),
                                                                Kit.row("b", at: 200, ["name": .string("Bar")])], cursor: nil)
            try await store.update("pin", id: "a", changes: ["name": .string("Café")])
            try await store.delete("pin", id: "b")
            let ops = try await store.outboxOperations()
            #expect(ops.map(\.operation.kind) == [.update, .delete])
            #expect(ops.map(\.operation.baseUpdatedAt) == [100, 200])
            #expect(ops.allSatisfy { $0.operation.queuedAt == Kit.clockTime })
            try await store.close()
        }
    }

    @Test("baseUpdatedAt: a second edit after a newer pull keeps the original base, and the pulled row does not overwrite the pending edit (merged edit)")
    func newerPullKeepsOriginalBaseWhenMerged() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100, ["name": .string("Cafe"), "rating": .int(3)])], cursor: nil)
            try await store.update("pin", id: "a", changes: ["name": .string("Local name")])

            // Someone else changed the record on the server; the pull brings stamp 200.
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 200, ["name": .string("Server name"), "rating": .int(4)])],
                                            cursor: PullCursor(updatedAt: 200, id: "a"))
            let shown = try #require(try await store.record("pin", id: "a"))
            #expect(shown.fields == ["name": .string("Local name"), "rating": .int(4)], "the local edit stays on top of the pulled row")
            #expect(shown.serverUpdatedAt == 200)
            #expect(shown.hasPendingChanges)

            try await store.update("pin", id: "a", changes: ["rating": .int(5)])
            let ops = try await Self.pending(store, "a")
            #expect(ops.count == 1)
            #expect(ops.first?.operation.baseUpdatedAt == 100, "the base is the copy the first edit was made on, not the newer pull")
            #expect(ops.first?.operation.fields == ["name": .string("Local name"), "rating": .int(5)])
            try await store.close()
        }
    }

    @Test("baseUpdatedAt: a second edit after a newer pull keeps the original base while the first edit is sent and unacknowledged (separate operation)")
    func newerPullKeepsOriginalBaseBehindSentEdit() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100, ["name": .string("Cafe")])], cursor: nil)
            try await store.update("pin", id: "a", changes: ["name": .string("Local name")])
            let first = try #require(try await store.outboxOperations().first)
            try await store.beginSending([first.id])
            await store.finishSending([first.id])  // the reply was lost: sent, never acknowledged

            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 200, ["name": .string("Server name")])], cursor: nil)
            #expect(try await store.record("pin", id: "a")?.fields == ["name": .string("Local name")])
            try await store.update("pin", id: "a", changes: ["visited": .bool(true)])
            let ops = try await Self.pending(store, "a")
            #expect(ops.count == 2, "a sent edit is never merged into")
            #expect(ops.map(\.operation.baseUpdatedAt) == [100, 100])
            try await store.close()
        }
    }

    @Test("baseUpdatedAt: a record created here has no base, and neither do edits on it until the server acknowledges it")
    func locallyCreatedRecordHasNoBase() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "n", fields: ["name": .string("New")])
            try await store.update("pin", id: "n", changes: ["rating": .int(1)])  // merges into the unsent create
            var ops = try await store.outboxOperations()
            #expect(ops.count == 1)
            #expect(ops.first?.operation.kind == .create)
            #expect(ops.first?.operation.baseUpdatedAt == nil)

            // The create is sent; later edits queue behind it, still without a base.
            try await store.beginSending([ops[0].id])
            try await store.update("pin", id: "n", changes: ["rating": .int(2)])
            try await store.update("pin", id: "n", changes: ["visited": .bool(true)])
            ops = try await store.outboxOperations()
            #expect(ops.map(\.operation.kind) == [.create, .update])
            #expect(ops.map(\.operation.baseUpdatedAt) == [nil, nil])
            try await store.delete("pin", id: "n")
            ops = try await store.outboxOperations()
            #expect(ops.map(\.operation.kind) == [.create, .delete])
            #expect(ops.map(\.operation.baseUpdatedAt) == [nil, nil], "the device time \(Kit.clockTime) never stands in for a base")

            // Replay gives the same bases.
            let live = try await store.currentState()
            try await store.close()
            let reopened = try await Kit.open(scratch.journal)
            #expect(try await reopened.currentState() == live)
            try await reopened.close()
        }
    }

    @Test("baseUpdatedAt: bases move with our own writes: after an acknowledgement with a row of updatedAt T, queued and later operations on the record get base T")
    func basesMoveWithOwnWrites() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            // A record created here: the create is in flight, an update queues behind it.
            try await store.create("pin", id: "n", fields: ["name": .string("New")])
            let create = try #require(try await store.outboxOperations().first)
            try await store.beginSending([create.id])
            try await store.update("pin", id: "n", changes: ["rating": .int(2)])
            #expect(try await Self.pending(store, "n").last?.operation.baseUpdatedAt == nil)

            try await store.deliverAcknowledgements([Acknowledgement(operationID: create.id, row: Kit.row("n", at: 700, ["name": .string("New")]))])
            await store.finishSending([create.id])
            var ops = try await Self.pending(store, "n")
            #expect(ops.map(\.operation.kind) == [.update])
            #expect(ops.first?.operation.baseUpdatedAt == 700, "the queued update now edits the server's copy 700")

            // A later edit merges into the unsent update and keeps its base 700.
            try await store.update("pin", id: "n", changes: ["visited": .bool(true)])
            ops = try await Self.pending(store, "n")
            #expect(ops.count == 1)
            #expect(ops.first?.operation.baseUpdatedAt == 700)

            // The update is acknowledged with 800: the next edit starts from 800.
            try await store.beginSending([ops[0].id])
            try await store.deliverAcknowledgements([Acknowledgement(operationID: ops[0].id,
                                                         row: Kit.row("n", at: 800, ["name": .string("New"), "rating": .int(2), "visited": .bool(true)]))])
            await store.finishSending([ops[0].id])
            try await store.delete("pin", id: "n")
            ops = try await Self.pending(store, "n")
            #expect(ops.map(\.operation.kind) == [.delete])
            #expect(ops.first?.operation.baseUpdatedAt == 800)
            try await store.close()
        }
    }

    @Test("baseUpdatedAt: bases move with our own writes for a server record: an update queued behind an in-flight update takes the acknowledged stamp")
    func queuedUpdateTakesAcknowledgedStamp() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100, ["name": .string("Cafe")])], cursor: nil)
            try await store.update("pin", id: "a", changes: ["name": .string("One")])
            let first = try #require(try await store.outboxOperations().first)
            try await store.beginSending([first.id])
            try await store.update("pin", id: "a", changes: ["name": .string("Two")])
            try await store.delete("pin", id: "a")  // merges with the queued update, keeps its base
            var ops = try await Self.pending(store, "a")
            #expect(ops.map(\.operation.kind) == [.update, .delete])
            #expect(ops.map(\.operation.baseUpdatedAt) == [100, 100])

            try await store.deliverAcknowledgements([Acknowledgement(operationID: first.id, row: Kit.row("a", at: 150, ["name": .string("One")]))])
            ops = try await Self.pending(store, "a")
            #expect(ops.map(\.operation.kind) == [.delete])
            #expect(ops.first?.operation.baseUpdatedAt == 150)
            // Replay reaches the same bases.
            let live = try await store.currentState()
            try await store.close()
            let reopened = try await Kit.open(scratch.journal)
            #expect(try await reopened.currentState() == live)
            try await reopened.close()
        }
    }

    @Test("baseUpdatedAt: the queuedAt from the injected TimeSource is never used as a base, in any queued, quarantined or conflicted operation")
    func queuedAtIsNeverABase() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100), Kit.row("b", at: 200), Kit.row("c", at: 300)], cursor: nil)
            try await store.create("pin", id: "n", fields: ["name": .string("New")])
            try await store.update("pin", id: "a", changes: ["x": .int(1)])
            try await store.update("pin", id: "a", changes: ["y": .int(2)])
            try await store.update("pin", id: "b", changes: ["x": .int(1)])
            try await store.delete("pin", id: "b")
            let c = try await store.create("pin", fields: [:]).id
            try await store.update("pin", id: c, changes: ["z": .int(3)])
            try await store.update("pin", id: "c", changes: ["x": .int(1)])
            let ops = try await store.outboxOperations()
            let cOp = try #require(ops.first { $0.operation.recordID == "c" })
            let nOp = try #require(ops.first { $0.operation.recordID == "n" })
            try await store.deliverConflict(cOp.id, server: Kit.row("c", at: 350))
            for _ in 0..<3 { try await store.deliverFailure(nOp.id, reason: "forbidden", permanent: true) }

            let state = try await store.currentState()
            #expect(try await store.quarantinedOperations().map(\.id) == [nOp.id])
            #expect(state.conflicts.map(\.id) == [cOp.id])
            let bases = state.outbox.operations.map(\.operation.baseUpdatedAt)
                + state.conflicts.map(\.base) + state.conflicts.map { $0.baseRow?.updatedAt }
            #expect(!bases.contains(Kit.clockTime))
            #expect(state.outbox.operations.allSatisfy { $0.operation.queuedAt == Kit.clockTime })
            // The quarantined create (no base) stays queued, first.
            #expect(state.outbox.operations.map(\.operation.baseUpdatedAt) == [nil, 100, 200, nil])
            try await store.close()
        }
    }
}

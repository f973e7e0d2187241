import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import Testing

// Reads: record()/records() return the last server
// snapshot with the pending operations applied on top; deleted records are hidden.

@Suite("LocalStore: reads")
struct LocalStoreReadTests {
    typealias Kit = StoreRulesKit

    @Test("reads: record() and records() show the server snapshot with the pending operations on top; deleted records are hidden; records() is sorted by id")
    func readsShowSnapshotPlusPendingOperations() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [
                Kit.row("c", at: 300, ["name": .string("Cinema")]),
                Kit.row("a", at: 100, ["name": .string("Cafe"), "rating": .int(3)]),
                Kit.row("b", at: 200, ["name": .string("Bakery")]),
                Kit.row("e", at: 500, ["name": .string("Eatery")]),
            ], cursor: PullCursor(updatedAt: 500, id: "e"))
            try await store.applyPulledPage(kind: "note", rows: [Kit.row("a", at: 10, ["text": .string("a note")], kind: "note")], cursor: nil)

            try await store.update("pin", id: "a", changes: ["rating": .int(5), "visited": .bool(true)])
            try await store.delete("pin", id: "c")
            try await store.create("pin", id: "d", fields: ["name": .string("Deli")])
            try await store.create("pin", id: "0-first", fields: ["name": .string("Zero")])
            try await store.create("pin", id: "gone", fields: ["name": .string("Gone")])
            try await store.delete("pin", id: "gone")

            let a = try #require(try await store.record("pin", id: "a"))
            #expect(a.fields == ["name": .string("Cafe"), "rating": .int(5), "visited": .bool(true)])
            #expect(a.serverUpdatedAt == 100)
            #expect(a.hasPendingChanges)

            let b = try #require(try await store.record("pin", id: "b"))
            #expect(b.fields == ["name": .string("Bakery")])
            #expect(b.serverUpdatedAt == 200)
            #expect(!b.hasPendingChanges)

            // Deleted here: hidden, although the server copy is still in the snapshot.
            #expect(try await store.record("pin", id: "c") == nil)
            #expect(try await store.currentState().snapshot[RecordKey(kind: "pin", id: "c")] != nil)
            // Created and deleted here: hidden.
            #expect(try await store.record("pin", id: "gone") == nil)

            let d = try #require(try await store.record("pin", id: "d"))
            #expect(d.fields == ["name": .string("Deli")])
            #expect(d.serverUpdatedAt == nil)
            #expect(d.hasPendingChanges)

            // Never existed; same id in another kind is another record.
            #expect(try await store.record("pin", id: "zzz") == nil)
            #expect(try await store.record("note", id: "a")?.fields == ["text": .string("a note")])

            let all = try await store.records("pin")
            #expect(all.map(\.id) == ["0-first", "a", "b", "d", "e"])
            #expect(all.allSatisfy { $0.kind == "pin" })
            #expect(try await store.records("note").map(\.id) == ["a"])
            #expect(try await store.records("nothing").isEmpty)
            try await store.close()
        }
    }

    @Test("reads: hasPendingChanges clears and serverUpdatedAt takes the server's stamp once the server acknowledges the edit")
    func acknowledgementClearsPendingChanges() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "d", fields: ["name": .string("Deli")])
            let op = try #require(try await store.outboxOperations().first)
            try await store.beginSending([op.id])
            try await store.deliverAcknowledgements([Acknowledgement(operationID: op.id, row: Kit.row("d", at: 900, ["name": .string("Deli"), "owner": .string("server")]))])
            await store.finishSending([op.id])
            let d = try #require(try await store.record("pin", id: "d"))
            #expect(!d.hasPendingChanges)
            #expect(d.serverUpdatedAt == 900)
            #expect(d.fields == ["name": .string("Deli"), "owner": .string("server")])
            try await store.close()
        }
    }

    @Test("reads: records() orders ids by their bytes, not by insertion or stamp")
    func recordsAreSortedByID() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let ids = ["b", "B", "a", "10", "9", "é", "aa", "Z"]
            try await store.applyPulledPage(kind: "pin", rows: ids.prefix(4).enumerated().map { Kit.row($1, at: Int64(100 - $0)) }, cursor: nil)
            for id in ids.dropFirst(4) { try await store.create("pin", id: id, fields: [:]) }
            let listed = try await store.records("pin").map(\.id)
            #expect(listed == ids.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
            try await store.close()
        }
    }
}

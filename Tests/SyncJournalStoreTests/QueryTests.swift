import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import Testing

@Suite("Queries: filters, order, limits")
struct QueryTests {
    typealias Kit = StoreRulesKit

    /// A store holding three pulled notes and two local edits on top.
    static func notes(_ scratch: Kit.Scratch, indexes: [FieldIndex] = []) async throws -> LocalStore {
        var options = Kit.options()
        options.indexes = indexes
        let store = try await LocalStore.open(path: scratch.journal, options: options)
        try await store.applyPulledPage(kind: "note", rows: [
            Kit.row("a", at: 100, ["list": "inbox", "due": 30, "title": "Call Ana"], kind: "note"),
            Kit.row("b", at: 200, ["list": "inbox", "due": 10, "title": "Buy milk"], kind: "note"),
            Kit.row("c", at: 300, ["list": "work", "due": 20, "title": "Report"], kind: "note"),
            Kit.row("p", at: 400, ["name": "not a note"], kind: "pin"),
        ].filter { $0.kind == "note" }, cursor: nil)
        try await store.create("note", id: "d", fields: ["list": "inbox", "due": 10, "title": "Alpha"])
        try await store.update("note", id: "c", changes: ["list": "inbox"])
        return store
    }

    @Test("a query returns the visible records that satisfy every filter, pending local edits included, in its order with ties broken by id")
    func filtersAndOrder() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Self.notes(scratch)
            let inbox = try await store.fetch(Query("note").filter(Field("list") == "inbox").order(Field("due").ascending, Field("list")))
            // b and d tie on due and list: by id.
            #expect(inbox.map(\.id) == ["b", "d", "c", "a"])
            #expect(inbox.first { $0.id == "c" }?.hasPendingChanges == true)
            #expect(inbox.first { $0.id == "a" }?.hasPendingChanges == false)
            #expect(inbox.first { $0.id == "a" }?.serverUpdatedAt == 100)

            let descending = try await store.fetch(Query("note").order(Field("due").descending))
            #expect(descending.map(\.id) == ["a", "c", "b", "d"])
            let soon = try await store.fetch(Query("note").filter(Field("due") < 30).filter(Field("title") != "Report"))
            #expect(soon.map(\.id) == ["b", "d"])
            #expect(try await store.count(Query("note").filter(Field("due") >= 20)) == 2)
            #expect(try await store.count(Query("note").filter(Field("due") <= 20 && !(Field("title") == "Alpha"))) == 2)
            #expect(try await store.count(Query("note").filter(Field("due") > 25 || Field("title").hasPrefix("Bu"))) == 2)
            #expect(try await store.fetchOne(Query("note").order(Field("title")))?.id == "d")
            #expect(try await store.fetchOne(Query("note").filter(Field("list") == "nowhere")) == nil)
        }
    }

    @Test("each result is the record exactly as record(_:id:) returns it: fields with pending edits on top, server stamp, pending mark")
    func resultsAreTheVisibleRecords() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Self.notes(scratch)
            let all = try await store.fetch(Query("note"))
            #expect(all.count == 4)
            for record in all { #expect(try await store.record("note", id: record.id) == record) }
            #expect(all == (try await store.records("note")))
        }
    }

    @Test("limit and offset page through the ordered results, and count counts the page")
    func limitAndOffset() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Self.notes(scratch)
            let ordered = Query("note").order(Field("due"))
            #expect(try await store.fetch(ordered.limit(2)).map(\.id) == ["b", "d"])
            #expect(try await store.fetch(ordered.limit(2, offset: 2)).map(\.id) == ["c", "a"])
            #expect(try await store.fetch(ordered.limit(2, offset: 3)).map(\.id) == ["a"])
            #expect(try await store.fetch(ordered.limit(2, offset: 9)).isEmpty)
            #expect(try await store.count(ordered.limit(3, offset: 2)) == 2)
            #expect(try await store.fetchOne(ordered.limit(5, offset: 1))?.id == "d")
        }
    }

    @Test("deleted records never appear in results, and a record deleted on the server leaves them")
    func deletedRecordsNeverAppear() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Self.notes(scratch)
            try await store.delete("note", id: "a")
            try await store.applyPulledPage(kind: "note", rows: [Kit.tombstone("b", at: 500, kind: "note")], cursor: nil)
            #expect(try await store.fetch(Query("note")).map(\.id) == ["c", "d"])
            #expect(try await store.count(Query("note").filter(Field("list") == "inbox")) == 2)
        }
    }

    @Test("values of different types sort in one order: null and missing, booleans, numbers (integers and doubles by value), strings, bytes, string sets")
    func totalOrderAcrossTypes() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let values: [(String, FieldValue?)] = [
                ("set", .stringSet(["a"])), ("bytes", .bytes([0])), ("string", "a"), ("two", 2), ("one-and-a-half", 1.5),
                ("minus-one", -1), ("true", true), ("false", false), ("null", .null), ("missing", nil), ("nan", .double(.nan)),
            ]
            for (id, value) in values {
                try await store.create("v", id: id, fields: value.map { ["x": $0] } ?? ["other": 0])
            }
            let sorted = try await store.fetch(Query("v").order(Field("x"))).map(\.id)
            #expect(sorted == ["missing", "null", "false", "true", "nan", "minus-one", "one-and-a-half", "two", "string", "bytes", "set"])
            #expect(try await store.count(Query("v").filter(Field("x").isNull)) == 2)
            #expect(try await store.count(Query("v").filter(Field("x") < false)) == 2)
            try await store.create("w", id: "int", fields: ["x": 1])
            try await store.create("w", id: "double", fields: ["x": 1.0])
            try await store.create("w", id: "big", fields: ["x": .int(Int64.max)])
            #expect(try await store.fetch(Query("w").filter(Field("x") == 1)).map(\.id) == ["double", "int"])
            #expect(try await store.fetch(Query("w").filter(Field("x") > 9.2e18)).map(\.id) == ["big"])
            #expect(try await store.fetch(Query("w").filter(Field("x") < 9.3e18)).map(\.id) == ["big", "double", "int"])
        }
    }

    @Test("contains matches a substring of a string field or a member of a string set; hasPrefix matches only strings")
    func containsAndPrefix() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("t", id: "1", fields: ["tags": .stringSet(["food", "bar"]), "name": "Tapas bar"])
            try await store.create("t", id: "2", fields: ["tags": .stringSet(["work"]), "name": "Office"])
            try await store.create("t", id: "3", fields: ["name": .bytes([0x4f])])
            #expect(try await store.fetch(Query("t").filter(Field("tags").contains("food"))).map(\.id) == ["1"])
            #expect(try await store.fetch(Query("t").filter(Field("name").contains("bar"))).map(\.id) == ["1"])
            #expect(try await store.fetch(Query("t").filter(Field("name").hasPrefix("Off"))).map(\.id) == ["2"])
            #expect(try await store.fetch(Query("t").filter(Field("name").hasPrefix(""))).map(\.id) == ["1", "2"])
        }
    }

    @Test("a query on an unreadable or closed store throws as record(_:id:) does")
    func closedStoreThrows() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.close()
            let error = await Kit.storeError { _ = try await store.fetch(Query("note")) }
            #expect(error == .closed)
        }
    }
}

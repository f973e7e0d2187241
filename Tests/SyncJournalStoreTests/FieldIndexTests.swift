import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import Testing

@Suite("Indexes: lookups without scans, kept up to date with every change")
struct FieldIndexTests {
    typealias Kit = StoreRulesKit

    static let indexes = [FieldIndex(kind: "note", field: "list"), FieldIndex(kind: "note", field: "due")]

    static func open(_ path: String, indexes: [FieldIndex] = Self.indexes, maximumPermanentFailures: Int = 3) async throws -> LocalStore {
        var options = Kit.options()
        options.indexes = indexes
        options.maximumPermanentFailures = maximumPermanentFailures
        return try await LocalStore.open(path: path, options: options)
    }

    /// What a query must return, worked out without the query machinery: every visible record, filtered and sorted here.
    static func expected(_ store: LocalStore, _ include: (StoreRecord) -> Bool) async throws -> [String] {
        try await store.records("note").filter(include).map(\.id)
    }

    /// Checks the indexed lookups against the records themselves.
    static func checkLookups(_ store: LocalStore, _ step: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for list in ["inbox", "work", "done"] {
            let found = try await store.fetch(Query("note").filter(Field("list") == .string(list))).map(\.id)
            let truth = try await expected(store) { ($0.fields["list"] ?? .null) == .string(list) }
            #expect(found == truth, "\(step): list == \(list)", sourceLocation: sourceLocation)
        }
        let found = try await store.fetch(Query("note").filter(Field("due") >= 20)).map(\.id)
        let truth = try await expected(store) { if case .int(let due) = $0.fields["due"] { return due >= 20 } else { return false } }
        #expect(found == truth, "\(step): due >= 20", sourceLocation: sourceLocation)
    }

    @Test("an indexed equality, range or prefix query reads only the records it returns, never every record of the kind")
    func indexedLookupDoesNotScan() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Self.open(scratch.journal)
            let rows: [ServerRow] = (0..<200).map { (n: Int) -> ServerRow in
                let list: FieldValue = n % 50 == 0 ? .string("inbox") : .string("work")
                return Kit.row("n\(n)", at: Int64(n + 1), ["list": list, "due": .int(Int64(n))], kind: "note")
            }
            try await store.applyPulledPage(kind: "note", rows: rows, cursor: nil)
            let before = await store.queryWork
            let inbox = try await store.fetch(Query("note").filter(Field("list") == "inbox").order(Field("due")))
            #expect(inbox.map(\.id) == ["n0", "n50", "n100", "n150"])
            let late = try await store.count(Query("note").filter(Field("due") >= 195).filter(Field("list") == "work"))
            #expect(late == 5)
            let prefixed = try await store.count(Query("note").filter(Field("list").hasPrefix("inb")))
            #expect(prefixed == 4)
            let after = await store.queryWork
            #expect(after.kindScans == before.kindScans)
            // Each query examined only what the most selective index returned: 4, then 5, then 4.
            #expect(after.recordsExamined - before.recordsExamined == 13)

            // A filter no index answers reads the whole kind: the counter can tell.
            _ = try await store.fetch(Query("note").filter(Field("title") == "x"))
            #expect(await store.queryWork.kindScans == after.kindScans + 1)
        }
    }

    @Test("indexes follow every change of the visible state: local edits, pulls, acknowledgements, conflicts, quarantine, discard, retry, checkpoint and reopening")
    func indexesFollowEveryChange() async throws {
        try await Kit.withScratch { scratch in
            var store = try await Self.open(scratch.journal, maximumPermanentFailures: 1)
            try await store.applyPulledPage(kind: "note", rows: [
                Kit.row("a", at: 100, ["list": "inbox", "due": 10], kind: "note"),
                Kit.row("b", at: 200, ["list": "work", "due": 20], kind: "note"),
                Kit.row("c", at: 300, ["list": "inbox", "due": 30], kind: "note"),
            ], cursor: nil)
            try await Self.checkLookups(store, "pulled")

            let moved = try await store.update("note", id: "a", changes: ["list": "work", "due": 40]).operation
            try await store.create("note", id: "d", fields: ["list": "inbox"])
            try await store.delete("note", id: "c")
            try await Self.checkLookups(store, "local edits")

            try await store.deliverAcknowledgements([Acknowledgement(operationID: moved,
                                                                     row: Kit.row("a", at: 500, ["list": "work", "due": 40], kind: "note"))])
            try await Self.checkLookups(store, "acknowledged")

            let conflicted = try await store.update("note", id: "b", changes: ["list": "done"]).operation
            try await Self.checkLookups(store, "before the conflict")
            // Server wins: the server's copy replaces the local edit.
            try await store.deliverConflict(conflicted, server: Kit.row("b", at: 600, ["list": "inbox", "due": 5], kind: "note"))
            try await Self.checkLookups(store, "conflict resolved")

            let create = try #require(try await store.pendingOperations(kind: "note", id: "d").first?.operation.id)
            try await store.deliverFailure(create, reason: "refused", permanent: true)
            #expect(try await store.quarantinedOperations().map(\.operation.id) == [create])
            try await Self.checkLookups(store, "quarantined")
            try await store.retryQuarantined(create)
            try await Self.checkLookups(store, "retried")
            try await store.deliverFailure(create, reason: "refused", permanent: true)
            try await store.discardQuarantined(create)
            try await Self.checkLookups(store, "discarded")

            try await store.applyPulledPage(kind: "note", rows: [Kit.tombstone("a", at: 700, kind: "note"),
                                                                 Kit.row("e", at: 800, ["list": "done", "due": 50], kind: "note")], cursor: nil)
            try await Self.checkLookups(store, "pulled again")

            try await store.checkpoint()
            try await Self.checkLookups(store, "checkpointed")
            try await store.update("note", id: "e", changes: ["list": "inbox"])
            try await store.close()

            store = try await Self.open(scratch.journal)
            try await Self.checkLookups(store, "reopened")
            #expect(try await store.fetch(Query("note").filter(Field("list") == "inbox")).map(\.id) == ["b", "e"])
            try await store.close()
        }
    }

    @Test("an index agrees with a scan for random edits and pulls of random values of every type")
    func indexAgreesWithScan() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Self.open(scratch.journal, indexes: [FieldIndex(kind: "note", field: "x")])
            var rng = SeededGenerator(seed: 7)
            let pool: [FieldValue] = [.null, false, true, 0, 1, 1.0, -0.0, 0.0, 2.5, .double(.nan), "", "a", "ab", "b", .bytes([1]), .stringSet(["s"])]
            for step in 0..<300 {
                let id = "r\(rng.next() % 40)"
                let value = pool[Int(rng.next() % UInt64(pool.count))]
                let exists = try await store.record("note", id: id) != nil
                switch rng.next() % 4 {
                case 0 where exists: try await store.delete("note", id: id)
                case 1 where exists: try await store.update("note", id: id, changes: ["x": value])
                case 2: try await store.applyPulledPage(kind: "note", rows: [Kit.row(id, at: Int64(step + 1), ["x": value], kind: "note")], cursor: nil)
                default: if !exists { try await store.create("note", id: id, fields: Bool.random(using: &rng) ? ["x": value] : [:]) }
                }
            }
            let all = try await store.records("note")
            let scans = await store.queryWork.kindScans
            for probe in pool {
                for (name, condition, holds) in [
                    ("==", Field("x") == probe, { (o: Int) in o == 0 }), ("<", Field("x") < probe, { $0 < 0 }),
                    ("<=", Field("x") <= probe, { $0 <= 0 }), (">", Field("x") > probe, { $0 > 0 }), (">=", Field("x") >= probe, { $0 >= 0 }),
                ] {
                    let found = try await store.fetch(Query("note").filter(condition)).map(\.id)
                    let truth = all.filter { holds(($0.fields["x"] ?? .null).queryOrder(probe)) }.map(\.id)
                    #expect(found == truth, "x \(name) \(probe)")
                }
            }
            #expect(await store.queryWork.kindScans == scans)
        }
    }
}

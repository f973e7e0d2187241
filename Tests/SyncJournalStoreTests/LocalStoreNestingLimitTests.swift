import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import Testing

/// The store never journals a value its own reader would refuse: fields nested deeper than
/// the limit, or holding an object member with an empty name, are refused from the app and
/// from the server alike, and nothing is written.
@Suite("LocalStore: the nesting limit of field values")
struct LocalStoreNestingLimitTests {
    typealias Kit = StoreRulesKit

    static let tooDeep = (0..<11).reduce(FieldValue.int(1)) { inner, _ in .array([inner]) }
    static let deepest = (0..<10).reduce(FieldValue.int(1)) { inner, _ in .object(["k": inner]) }

    @Test("a create or update nested deeper than 10, or with an empty member name, is refused and nothing is journaled; 10 deep is kept and replayed")
    func editsAreChecked() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "p1", fields: ["deepest": Self.deepest])
            let before = try Kit.recordCount(scratch.journal)
            await #expect(throws: StoreError.invalidFields(kind: "pin", id: "p2", reason: "field \"deep\" nests arrays and objects more than 10 deep")) {
                try await store.create("pin", id: "p2", fields: ["deep": Self.tooDeep])
            }
            await #expect(throws: StoreError.invalidFields(kind: "pin", id: "p1", reason: "field \"a\" holds an object member with an empty name")) {
                try await store.update("pin", id: "p1", changes: ["a": .object(["": .null])])
            }
            #expect(try Kit.recordCount(scratch.journal) == before)
            try await store.close()
            let reopened = try await Kit.open(scratch.journal)
            #expect(try await reopened.record("pin", id: "p1")?.fields == ["deepest": Self.deepest])
            try await reopened.close()
        }
    }

    @Test("a pulled page with a row nested deeper than 10 is refused whole before anything is kept")
    func serverRowsAreChecked() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let before = try Kit.recordCount(scratch.journal)
            await #expect(throws: StoreError.invalidServerData(kind: "pin", index: 1, reason: "field \"deep\" nests arrays and objects more than 10 deep")) {
                try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 1, ["ok": .int(1)]), Kit.row("b", at: 2, ["deep": Self.tooDeep])],
                                                cursor: PullCursor(updatedAt: 2, id: "b"))
            }
            #expect(try Kit.recordCount(scratch.journal) == before)
            #expect(try await store.records("pin").isEmpty)
            try await store.close()
        }
    }
}

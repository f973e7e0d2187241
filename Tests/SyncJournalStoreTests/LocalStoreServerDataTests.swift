import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import Testing

// Server data is validated before it is kept; a bad page throws a typed error
// and leaves the old snapshot and cursors as they were.

@Suite("LocalStore: server data validated before it is kept")
struct LocalStoreServerDataTests {
    typealias Kit = StoreRulesKit

    /// A page that must be refused, and what is wrong with it.
    struct BadPage: Sendable, CustomTestStringConvertible {
        var name: String
        var rows: [ServerRow]
        var cursor: PullCursor?
        var testDescription: String { name }
    }

    static let goodRow = Kit.row("fresh", at: 400, ["name": .string("Fresh")])

    static let badPages: [BadPage] = [
        BadPage(name: "a row of another kind", rows: [goodRow, Kit.row("n1", at: 410, kind: "note")], cursor: PullCursor(updatedAt: 410, id: "n1")),
        BadPage(name: "an empty id", rows: [goodRow, Kit.row("", at: 410)], cursor: PullCursor(updatedAt: 410, id: "")),
        BadPage(name: "an id of 65 bytes", rows: [goodRow, Kit.row(String(repeating: "é", count: 32) + "x", at: 410)], cursor: nil),
        BadPage(name: "a duplicate id", rows: [goodRow, Kit.row("fresh", at: 410, ["name": .string("Again")])], cursor: PullCursor(updatedAt: 410, id: "fresh")),
        BadPage(name: "an empty field name", rows: [goodRow, Kit.row("x", at: 410, ["": .int(1)])], cursor: PullCursor(updatedAt: 410, id: "x")),
        BadPage(name: "a cursor behind the current one", rows: [goodRow], cursor: PullCursor(updatedAt: 299, id: "zzz")),
        BadPage(name: "a cursor with the same stamp but a smaller id", rows: [goodRow], cursor: PullCursor(updatedAt: 300, id: "a")),
        BadPage(name: "a tombstone with an empty id", rows: [Kit.tombstone("", at: 410)], cursor: nil),
    ]

    /// A store with snapshot a@100, b@300 and cursor 300:b, and a local edit on a.
    static func seededStore(_ path: String) async throws -> LocalStore {
        let store = try await Kit.open(path)
        try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100, ["name": .string("Cafe")]),
                                                            Kit.row("b", at: 300, ["name": .string("Bar")])],
                                        cursor: PullCursor(updatedAt: 300, id: "b"))
        try await store.update("pin", id: "a", changes: ["rating": .int(5)])
        return store
    }

    @Test("server data validated: a page with a row of another kind, an empty id, a 65-byte id, a duplicate id, an empty field name, or a cursor behind the current one throws invalidServerData and leaves snapshot and cursor unchanged",
          arguments: badPages)
    func badPageIsRefused(page: BadPage) async throws {
        try await Kit.withScratch { scratch in
            let store = try await Self.seededStore(scratch.journal)
            let before = try await store.currentState()
            let records = try Kit.recordCount(scratch.journal)
            let error = await Kit.storeError { try await store.applyPulledPage(kind: "pin", rows: page.rows, cursor: page.cursor) }
            #expect(error?.caseName == "invalidServerData", "got \(String(describing: error))")
            #expect(try await store.currentState() == before)
            #expect(try await store.cursor(for: "pin") == PullCursor(updatedAt: 300, id: "b"))
            #expect(try await store.record("pin", id: "fresh") == nil, "not even the valid rows before the bad one are kept")
            #expect(try Kit.recordCount(scratch.journal) == records)
            #expect(await store.status == .ready)
            try await store.close()
        }
    }

    @Test("server data validated: an empty kind is refused")
    func emptyKindIsRefused() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Self.seededStore(scratch.journal)
            let before = try await store.currentState()
            #expect(await Kit.storeError { try await store.applyPulledPage(kind: "", rows: [], cursor: nil) } == .emptyKind)
            #expect(try await store.currentState() == before)
            try await store.close()
        }
    }

    @Test("server data validated: a valid page is kept with its cursor, and rows never overwrite pending local edits")
    func validPageIsKept() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Self.seededStore(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 400, ["name": .string("Café"), "rating": .int(1)]), Self.goodRow],
                                            cursor: PullCursor(updatedAt: 400, id: "fresh"))
            #expect(try await store.cursor(for: "pin") == PullCursor(updatedAt: 400, id: "fresh"))
            #expect(try await store.record("pin", id: "fresh")?.fields == ["name": .string("Fresh")])
            #expect(try await store.record("pin", id: "a")?.fields == ["name": .string("Café"), "rating": .int(5)])
            // A cursor equal to the current one is not behind it.
            try await store.applyPulledPage(kind: "pin", rows: [], cursor: PullCursor(updatedAt: 400, id: "fresh"))
            let reopened = try await LocalStoreCompactionTests.reopen(store)
            try await reopened.close()
        }
    }

    @Test("server data validated: a tombstone row removes the local copy")
    func tombstoneRemovesLocalCopy() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Self.seededStore(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.tombstone("b", at: 500)], cursor: PullCursor(updatedAt: 500, id: "b"))
            #expect(try await store.record("pin", id: "b") == nil)
            #expect(try await store.currentState().snapshot[RecordKey(kind: "pin", id: "b")] == nil)
            #expect(try await store.records("pin").map(\.id) == ["a"])
            // A tombstone for a record never seen is harmless.
            try await store.applyPulledPage(kind: "pin", rows: [Kit.tombstone("never", at: 510)], cursor: nil)
            #expect(try await store.records("pin").map(\.id) == ["a"])
            let reopened = try await LocalStoreCompactionTests.reopen(store)
            #expect(try await reopened.record("pin", id: "b") == nil)
            try await reopened.close()
        }
    }

    @Test("server data validated: an empty page (no rows, nil cursor) keeps the cursor and writes nothing")
    func emptyPageKeepsCursor() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Self.seededStore(scratch.journal)
            let before = try await store.currentState()
            let records = try Kit.recordCount(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [], cursor: nil)
            #expect(try await store.cursor(for: "pin") == PullCursor(updatedAt: 300, id: "b"))
            #expect(try await store.currentState() == before)
            #expect(try Kit.recordCount(scratch.journal) == records)
            // Rows without a cursor keep the cursor too.
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("c", at: 350)], cursor: nil)
            #expect(try await store.cursor(for: "pin") == PullCursor(updatedAt: 300, id: "b"))
            #expect(try await store.record("pin", id: "c") != nil)
            try await store.close()
        }
    }

    @Test("server data validated: cursors are per kind; a page of one kind never moves another kind's cursor")
    func cursorsArePerKind() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Self.seededStore(scratch.journal)
            try await store.applyPulledPage(kind: "note", rows: [Kit.row("n", at: 10, kind: "note")], cursor: PullCursor(updatedAt: 10, id: "n"))
            #expect(try await store.cursor(for: "note") == PullCursor(updatedAt: 10, id: "n"))
            #expect(try await store.cursor(for: "pin") == PullCursor(updatedAt: 300, id: "b"))
            try await store.close()
        }
    }

    @Test("server data validated: a page spanning several kinds is refused whole when one kind is bad: no kind's snapshot or cursor changes")
    func multiKindPageIsAllOrNothing() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Self.seededStore(scratch.journal)
            try await store.applyPulledPage(kind: "note", rows: [Kit.row("n", at: 10, kind: "note")], cursor: PullCursor(updatedAt: 10, id: "n"))
            let before = try await store.currentState()
            let records = try Kit.recordCount(scratch.journal)
            let good = LocalStore.PulledKindPage(kind: "pin", rows: [Self.goodRow], cursor: PullCursor(updatedAt: 400, id: "fresh"))
            let bad: [LocalStore.PulledKindPage] = [
                LocalStore.PulledKindPage(kind: "note", rows: [Kit.row("", at: 20, kind: "note")], cursor: PullCursor(updatedAt: 20, id: "")),
                LocalStore.PulledKindPage(kind: "note", rows: [Kit.row("m", at: 20, kind: "note")], cursor: PullCursor(updatedAt: 5, id: "m")),
                LocalStore.PulledKindPage(kind: "note", rows: [Kit.row("m", at: 20, kind: "pin")], cursor: nil),
            ]
            for page in bad {
                let error = await Kit.storeError { try await store.applyPulledPages([good, page]) }
                #expect(error?.caseName == "invalidServerData", "got \(String(describing: error))")
                #expect(try await store.currentState() == before)
                #expect(try Kit.recordCount(scratch.journal) == records)
            }
            // The same page with a good second kind is kept whole.
            try await store.applyPulledPages([good, LocalStore.PulledKindPage(kind: "note", rows: [Kit.row("m", at: 20, kind: "note")], cursor: PullCursor(updatedAt: 20, id: "m"))])
            #expect(try await store.cursor(for: "pin") == PullCursor(updatedAt: 400, id: "fresh"))
            #expect(try await store.cursor(for: "note") == PullCursor(updatedAt: 20, id: "m"))
            try await store.close()
        }
    }
}

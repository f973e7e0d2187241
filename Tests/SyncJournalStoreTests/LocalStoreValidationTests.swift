import SyncJournalPlatform
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import Testing

// Input validation: create/update/delete validate their
// input and throw a typed error before anything is journaled.

@Suite("LocalStore: input validation")
struct LocalStoreValidationTests {
    typealias Kit = StoreRulesKit

    /// 16 four-byte scalars: exactly 64 UTF-8 bytes.
    static let id64 = String(repeating: "😀", count: 16)
    /// 65 UTF-8 bytes (16 four-byte scalars and one ASCII letter).
    static let id65 = String(repeating: "😀", count: 16) + "a"

    /// Runs `body` on a store holding server record `srv`, and checks that no
    /// refused call wrote anything.
    static func withStore(_ body: (LocalStore) async throws -> Void) async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("srv", at: 100, ["name": .string("Cafe")])], cursor: nil)
            try await body(store)
            try await store.close()
        }
    }

    @Test("input validation: an empty kind is refused with StoreError.emptyKind by create, update and delete, and nothing is journaled")
    func emptyKindIsRefused() async throws {
        try await Self.withStore { store in
            let records = try Kit.recordCount(store.path)
            #expect(await Kit.storeError { try await store.create("", id: "a", fields: [:]) } == .emptyKind)
            #expect(await Kit.storeError { try await store.update("", id: "srv", changes: ["x": .int(1)]) } == .emptyKind)
            #expect(await Kit.storeError { try await store.delete("", id: "srv") } == .emptyKind)
            #expect(try Kit.recordCount(store.path) == records)
            #expect(try await store.outboxOperations().isEmpty)
        }
    }

    @Test("input validation: an empty record id is refused with StoreError.invalidRecordID")
    func emptyIDIsRefused() async throws {
        try await Self.withStore { store in
            let records = try Kit.recordCount(store.path)
            #expect(await Kit.storeError { try await store.create("pin", id: "", fields: [:]) }?.caseName == "invalidRecordID")
            #expect(await Kit.storeError { try await store.update("pin", id: "", changes: ["x": .int(1)]) }?.caseName == "invalidRecordID")
            #expect(await Kit.storeError { try await store.delete("pin", id: "") }?.caseName == "invalidRecordID")
            #expect(try Kit.recordCount(store.path) == records)
            #expect(try await store.outboxOperations().isEmpty)
        }
    }

    @Test("input validation: an id of 65 UTF-8 bytes is refused with StoreError.invalidRecordID, one of 64 (multibyte) is accepted")
    func idLengthIsCountedInUTF8Bytes() async throws {
        #expect(Self.id64.utf8.count == 64 && Self.id64.count == 16)
        #expect(Self.id65.utf8.count == 65)
        let ascii64 = String(repeating: "x", count: 64)
        let ascii65 = String(repeating: "x", count: 65)
        // 22 three-byte scalars: only 22 characters but 66 bytes.
        let cjk66 = String(repeating: "日", count: 22)
        try await Self.withStore { store in
            let records = try Kit.recordCount(store.path)
            for id in [Self.id65, ascii65, cjk66] {
                #expect(await Kit.storeError { try await store.create("pin", id: id, fields: [:]) }?.caseName == "invalidRecordID", "id of \(id.utf8.count) bytes")
                #expect(await Kit.storeError { try await store.update("pin", id: id, changes: ["x": .int(1)]) }?.caseName == "invalidRecordID")
                #expect(await Kit.storeError { try await store.delete("pin", id: id) }?.caseName == "invalidRecordID")
            }
            #expect(try Kit.recordCount(store.path) == records)

            for id in [Self.id64, ascii64] {
                try await store.create("pin", id: id, fields: ["name": .string("Long")])
                try await store.update("pin", id: id, changes: ["visited": .bool(true)])
                #expect(try await store.record("pin", id: id)?.fields == ["name": .string("Long"), "visited": .bool(true)])
            }
            // The accepted ids survive a reopen byte for byte.
            let live = try await store.currentState()
            try await store.close()
            let reopened = try await Kit.open(store.path)
            #expect(try await reopened.currentState() == live)
            #expect(try await reopened.record("pin", id: Self.id64) != nil)
            try await reopened.close()
        }
    }

    @Test("input validation: an empty field name is refused with StoreError.invalidFields by create and update")
    func emptyFieldNameIsRefused() async throws {
        try await Self.withStore { store in
            let records = try Kit.recordCount(store.path)
            #expect(await Kit.storeError { try await store.create("pin", id: "a", fields: ["": .int(1)]) }?.caseName == "invalidFields")
            #expect(await Kit.storeError { try await store.update("pin", id: "srv", changes: ["ok": .int(1), "": .null]) }?.caseName == "invalidFields")
            #expect(try Kit.recordCount(store.path) == records)
            #expect(try await store.record("pin", id: "a") == nil)
            #expect(try await store.record("pin", id: "srv")?.fields == ["name": .string("Cafe")])
        }
    }

    @Test("input validation: update or delete of a record that is not visible throws recordNotFound (never seen, deleted here, or of another kind)")
    func editOfInvisibleRecordIsRecordNotFound() async throws {
        try await Self.withStore { store in
            #expect(await Kit.storeError { try await store.update("pin", id: "ghost", changes: ["x": .int(1)]) } == .recordNotFound(RecordKey(kind: "pin", id: "ghost")))
            #expect(await Kit.storeError { try await store.delete("pin", id: "ghost") } == .recordNotFound(RecordKey(kind: "pin", id: "ghost")))
            #expect(await Kit.storeError { try await store.delete("note", id: "srv") } == .recordNotFound(RecordKey(kind: "note", id: "srv")))

            try await store.delete("pin", id: "srv")
            let records = try Kit.recordCount(store.path)
            #expect(await Kit.storeError { try await store.update("pin", id: "srv", changes: ["x": .int(1)]) } == .recordNotFound(RecordKey(kind: "pin", id: "srv")))
            #expect(await Kit.storeError { try await store.delete("pin", id: "srv") } == .recordNotFound(RecordKey(kind: "pin", id: "srv")))
            #expect(try Kit.recordCount(store.path) == records)
            #expect(try await store.outboxOperations().count == 1)
        }
    }

    @Test("input validation: create of a visible id throws recordAlreadyExists (server copy or local create); a deleted id may be created again")
    func createOfVisibleIDIsRecordAlreadyExists() async throws {
        try await Self.withStore { store in
            #expect(await Kit.storeError { try await store.create("pin", id: "srv", fields: [:]) } == .recordAlreadyExists(RecordKey(kind: "pin", id: "srv")))
            try await store.create("pin", id: "mine", fields: ["name": .string("Museum")])
            #expect(await Kit.storeError { try await store.create("pin", id: "mine", fields: [:]) } == .recordAlreadyExists(RecordKey(kind: "pin", id: "mine")))
            // The same id in another kind is another record.
            try await store.create("note", id: "mine", fields: [:])
            #expect(try await store.outboxOperations().count == 2)

            // Once deleted here, the id is free again.
            try await store.delete("pin", id: "srv")
            try await store.create("pin", id: "srv", fields: ["name": .string("Reborn")])
            #expect(try await store.record("pin", id: "srv")?.fields == ["name": .string("Reborn")])
        }
    }

    @Test("input validation: create without an id makes a fresh id (from Options.makeRecordID) each time")
    func createWithoutIDMakesFreshID() async throws {
        try await Kit.withScratch { scratch in
            // The default generator: two creates get two different, valid ids.
            let store = try await Kit.open(scratch.journal)
            let first = try await store.create("pin", fields: ["name": .string("A")]).id
            let second = try await store.create("pin", fields: ["name": .string("A")]).id
            #expect(first != second)
            #expect(!first.isEmpty && first.utf8.count <= 64)
            #expect(try await store.record("pin", id: first) != nil)
            #expect(try await store.records("pin").map(\.id) == [first, second].sorted())
            try await store.close()

            // An injected generator is the one used.
            let counter = Mutex(0)
            let options = Kit.options(makeRecordID: { counter.withLock { $0 += 1; return "gen-\($0)" } })
            let other = try await LocalStore.open(path: scratch.file("other.journal"), options: options)
            #expect(try await other.create("pin", fields: [:]).id == "gen-1")
            #expect(try await other.create("pin", fields: [:]).id == "gen-2")
            // An explicit id is used as given.
            #expect(try await other.create("pin", id: "explicit", fields: [:]).id == "explicit")
            try await other.close()
        }
    }
}

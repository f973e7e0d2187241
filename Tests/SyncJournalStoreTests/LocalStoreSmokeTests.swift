import SyncJournalProtocol
import Foundation
import SyncJournalCore
import SyncJournalStore
import SyncJournalTesting
import Testing

@Suite("Local store, basic flows")
struct LocalStoreSmokeTests {
    @Test("edits survive a reopen: replay rebuilds the same state")
    func editsSurviveReopen() async throws {
        try await withTemporaryDirectory(prefix: "store-smoke") { directory in
            let path = directory.file("store.journal")
            let store = try await LocalStore.open(path: path)
            try await store.create("pin", id: "a", fields: ["name": .string("Cafe")])
            try await store.create("pin", id: "b", fields: ["name": .string("Museum")])
            try await store.update("pin", id: "a", changes: ["visited": .bool(true)])
            let live = try await store.currentState()
            #expect(try await store.outboxOperations().count == 2)  // the update merged into the unsent create
            try await store.close()
            let reopened = try await LocalStore.open(path: path)
            #expect(try await reopened.currentState() == live)
            #expect(try await reopened.record("pin", id: "a")?.fields == ["name": .string("Cafe"), "visited": .bool(true)])
            try await reopened.delete("pin", id: "b")
            #expect(try await reopened.outboxOperations().count == 1)
            try await reopened.checkpoint()
            let afterCheckpoint = try await reopened.currentState()
            try await reopened.close()
            let third = try await LocalStore.open(path: path)
            #expect(try await third.currentState() == afterCheckpoint)
            try await third.close()
        }
    }
}

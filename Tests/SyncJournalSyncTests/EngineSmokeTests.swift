import SyncJournalProtocol
import Foundation
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

@Suite("Sync engine, basic flows")
struct EngineSmokeTests {
    @Test("two devices converge through the reference server")
    func twoDevicesConverge() async throws {
        try await withTemporaryDirectory(prefix: "engine-smoke") { directory in
            let server = ReferenceServer()
            let a = try await LocalStore.open(path: directory.file("a.journal"))
            let b = try await LocalStore.open(path: directory.file("b.journal"))
            let engineA = SyncEngine(store: a, transport: server.transport(user: "u1"), options: .init(kinds: ["pin"]))
            let engineB = SyncEngine(store: b, transport: server.transport(user: "u1"), options: .init(kinds: ["pin"]))
            try await a.create("pin", id: "p1", fields: ["name": .string("Cafe")])
            #expect(await engineA.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
            #expect(await engineB.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
            #expect(try await b.record("pin", id: "p1")?.fields == ["name": .string("Cafe")])
            try await b.update("pin", id: "p1", changes: ["name": .string("Café")])
            #expect(await engineB.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
            #expect(await engineA.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
            #expect(try await a.record("pin", id: "p1")?.fields == ["name": .string("Café")])
            #expect(try await a.outboxOperations().isEmpty)
            try await a.close()
            try await b.close()
        }
    }
}

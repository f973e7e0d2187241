import SyncJournalProtocol
import Foundation
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// A cheap scale smoke test (the 100,000-operation measurement is a
/// separate, manual run: `sync-demo --push-benchmark`).
@Suite("Sync engine: scale smoke")
struct ScaleSmokeTests {
    @Test("2,000 queued operations push in batches to the reference server and the outbox ends empty")
    func twoThousandQueuedOperationsPushInBatches() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server, batchSize: 250, pullLimit: 500)
        let store = device.store
        let count = 2_000
        // Concurrent edits share journal writes (group commit), which keeps this fast.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask { try await store.create("pin", id: "r\(index)", fields: ["n": .int(Int64(index))]) }
            }
            try await group.waitForAll()
        }
        #expect(try await store.outboxOperations().count == count)

        #expect(await device.sync() == .ok(pushed: count, pulled: count, conflicts: 0))
        #expect(try await store.outboxOperations().isEmpty)
        let batches = await device.recorder.pushBatches
        #expect(batches.count == count / 250)
        #expect(batches.allSatisfy { $0.count <= 250 })
        #expect(await server.appliedMutations == count)
        #expect(await server.rows(user: "u1", kind: "pin").count == count)
        #expect(await device.recorder.pages.count == count / 500)
        #expect(try await store.records("pin").count == count)
        #expect(try await store.records("pin").allSatisfy { !$0.hasPendingChanges })
        try await store.close()
    }
}

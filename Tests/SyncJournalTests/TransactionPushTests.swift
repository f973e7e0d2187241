import Foundation
import SyncJournal
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

// What the server sees of a write transaction: one operation per edit, in
// order, in one push where they fit; each applied on its own.

@Suite("Write transactions, as the server sees them")
struct TransactionPushTests {
    @Test("the edits of a write reach the server as one operation each, in the order they were staged, in one push when the batch size allows", arguments: [100, 2])
    func editsArePushedInOrder(batchSize: Int) async throws {
        let directory = try TemporaryDirectory(prefix: "transaction-push"); defer { directory.remove() }
        let server = ReferenceServer()
        let store = try await LocalStore.open(path: directory.file("trips.journal"))
        let edits = try await store.write { tx in
            try tx.create("trip", id: "t", fields: ["name": .string("Lisbon")])
            try tx.create("stop", id: "s", fields: ["trip": .string("t")])
            try tx.create("note", id: "n", fields: ["text": .string("pack light")])
        }
        let transport = RecordingTransport(server.transport(user: "u1"))
        let engine = SyncEngine(store: store, transport: transport,
                                options: .init(kinds: ["trip", "stop", "note"], batchSize: batchSize))
        _ = await engine.sync()
        #expect(await server.acceptedPushSizes == (batchSize >= 3 ? [3] : [2, 1]))
        #expect(await transport.pushBatches.flatMap { $0.map(\.operationID) } == edits.map(\.operation), "one operation per edit, in staging order")
        for edit in edits {
            if case .acknowledged = await store.outcome(of: edit.operation) {} else { Issue.record("\(edit) not acknowledged") }
        }
        try await store.close()
    }
}

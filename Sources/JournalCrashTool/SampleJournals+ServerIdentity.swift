import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore

extension SampleJournals {
    /// Format 2.4's server records: an identity learned before the first
    /// page, an edit sent to the server, a mismatch that stops sync, a
    /// reconciliation's re-uploads (a create, an update on the new server's
    /// stamp, a rename of the sent edit) and the adopted identity.
    static func serverIdentityEvents() -> StoreEventRecorder {
        let s = storeServerStamp
        var store = StoreEventRecorder()
        store.generator = SeededGenerator(seed: 24)
        let first = ServerIdentity("server-a")!
        let second = ServerIdentity("server-b")!
        store.record(.server(.learned(first)))
        store.record(.pulled(kind: "pin", rows: [
            ServerRow(kind: "pin", id: "p-cafe", fields: ["name": .string("Café Kranz")], updatedAt: s + 1),
            ServerRow(kind: "pin", id: "p-park", fields: ["name": .string("Park")], updatedAt: s + 2),
        ], cursor: PullCursor(updatedAt: s + 2, id: "p-park")))
        let rating = store.edit(.update, "pin", "p-cafe", ["rating": .int(4)], at: 1)
        store.record(.sent([rating]))
        store.record(.server(.mismatched(.differentServer(expected: first, found: second))))
        let renamed = OperationID.random(using: &store.generator)
        store.record(.reuploads(ReuploadPlan(
            uploads: [
                JournalOperation(id: .random(using: &store.generator), kind: .create, entity: "pin", recordID: "p-cafe",
                                 fields: ["name": .string("Café Kranz")], queuedAt: SampleJournals.baseTime + 120_000),
                JournalOperation(id: .random(using: &store.generator), kind: .update, entity: "pin", recordID: "p-park",
                                 fields: ["name": .string("Park")], baseUpdatedAt: 7, queuedAt: SampleJournals.baseTime + 120_000),
            ],
            rebases: [],
            renames: [ReuploadPlan.Rename(from: rating, to: renamed)])))
        store.record(.pulled(kind: "pin", rows: [
            ServerRow(kind: "pin", id: "p-park", fields: ["name": .string("Park West")], updatedAt: 7),
        ], cursor: PullCursor(updatedAt: 7, id: "p-park")))
        store.record(.server(.adopted(second, seenStamp: 7)))
        store.record(.server(.mismatched(.behind(identity: second, seenStamp: 9, latestStamp: 8))))
        store.record(.server(.adopted(nil, seenStamp: nil)))
        return store
    }
}

import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore

/// The golden journal of format 2.3: the model version that wrote each edit and row.
extension SampleJournals {
    /// A device on model version 4 that pulls rows written by versions 3
    /// and (not stated), edits them and a record of its own, and is
    /// acknowledged by a server that keeps the highest version per row.
    static func modelVersionEvents() -> StoreEventRecorder {
        let s = storeServerStamp
        var store = StoreEventRecorder()
        store.generator = SeededGenerator(seed: 23)
        store.record(.pulled(kind: "pin", rows: [
            ServerRow(kind: "pin", id: "p-cafe", fields: ["name": .string("Café Kranz")], updatedAt: s + 1, modelVersion: 3),
            ServerRow(kind: "pin", id: "p-plain", fields: ["name": .string("Plain")], updatedAt: s + 2),
            ServerRow(kind: "pin", id: "p-gone", updatedAt: s + 3, deletedAt: s + 3, modelVersion: 65_535),
        ], cursor: PullCursor(updatedAt: s + 3, id: "p-gone")))
        // A create by version 2, then an update by version 4 merged into it: the create keeps 4.
        store.edit(.create, "pin", "p-new", ["name": .string("Tapas Bar Sol")], at: 1, modelVersion: 2)
        store.edit(.update, "pin", "p-new", ["rating": .int(5)], at: 2, modelVersion: 4)
        // An update by version 4, then an untyped one merged into it: still 4.
        let rating = store.edit(.update, "pin", "p-cafe", ["rating": .int(3)], at: 3, modelVersion: 4)
        store.edit(.update, "pin", "p-cafe", ["visited": .bool(true)], at: 4)
        store.record(.sent([rating]))
        store.record(.acknowledged([Acknowledgement(operationID: rating,
                                                    row: ServerRow(kind: "pin", id: "p-cafe",
                                                                   fields: ["name": .string("Café Kranz"), "rating": .int(3), "visited": .bool(true)],
                                                                   updatedAt: s + 10, modelVersion: 4))]))
        // An untyped update, then a delete by version 1 that replaces it: the delete carries 1.
        store.edit(.update, "pin", "p-plain", ["name": .string("Plainer")], at: 5)
        store.edit(.delete, "pin", "p-plain", at: 6, modelVersion: 1)
        return store
    }
}

import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import Testing

// A push whose reply was lost is sent again, and the server answers the
// resend from its memory: the row as it was when the operation was first
// applied. By then the device may have pulled a later change of the record,
// or its deletion. That old row must not take the device's copy back.

@Suite("LocalStore: an acknowledgement answered from the server's memory")
struct LocalStoreLateAcknowledgementTests {
    typealias Kit = StoreRulesKit

    /// A store that pulled pin a@100 and then queued an update of it; returns the update's id.
    static func storeWithQueuedUpdate(_ path: String) async throws -> (LocalStore, OperationID) {
        let store = try await Kit.open(path)
        try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100, ["name": .string("Cafe")])],
                                        cursor: PullCursor(updatedAt: 100, id: "a"))
        let edit = try await store.update("pin", id: "a", changes: ["rating": .int(3)])
        return (store, edit.operation)
    }

    @Test("an update applied at 200 whose acknowledgement arrives after a pull brought the record's deletion at 300 leaves the record deleted, also after a reopen")
    func lateAcknowledgementKeepsPulledDeletion() async throws {
        try await Kit.withScratch { scratch in
            let (store, update) = try await Self.storeWithQueuedUpdate(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.tombstone("a", at: 300)], cursor: PullCursor(updatedAt: 300, id: "a"))
            try await store.deliverAcknowledgements([Acknowledgement(operationID: update, row: Kit.row("a", at: 200, ["name": .string("Cafe"), "rating": .int(3)]))])
            #expect(try await store.record("pin", id: "a") == nil)
            #expect(try await store.outboxOperations().isEmpty)
            try await store.close()
            let reopened = try await Kit.open(scratch.journal)
            #expect(try await reopened.record("pin", id: "a") == nil, "replay folds the acknowledgement the same way")
            try await reopened.close()
        }
    }

    @Test("an acknowledgement at 200 arriving after a pull brought the record at 300 keeps the copy at 300")
    func lateAcknowledgementKeepsNewerCopy() async throws {
        try await Kit.withScratch { scratch in
            let (store, update) = try await Self.storeWithQueuedUpdate(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 300, ["name": .string("Bar"), "rating": .int(5)])],
                                            cursor: PullCursor(updatedAt: 300, id: "a"))
            try await store.deliverAcknowledgements([Acknowledgement(operationID: update, row: Kit.row("a", at: 200, ["name": .string("Cafe"), "rating": .int(3)]))])
            let record = try await store.record("pin", id: "a")
            #expect(record?.fields == ["name": .string("Bar"), "rating": .int(5)])
            #expect(record?.serverUpdatedAt == 300)
            try await store.close()
        }
    }

    @Test("an acknowledgement newer than everything pulled replaces the device's copy, a tombstone removes it")
    func currentAcknowledgementIsKept() async throws {
        try await Kit.withScratch { scratch in
            let (store, update) = try await Self.storeWithQueuedUpdate(scratch.journal)
            try await store.deliverAcknowledgements([Acknowledgement(operationID: update, row: Kit.row("a", at: 200, ["name": .string("Cafe"), "rating": .int(3)]))])
            let record = try await store.record("pin", id: "a")
            #expect(record?.serverUpdatedAt == 200)
            #expect(record?.fields == ["name": .string("Cafe"), "rating": .int(3)])
            let delete = try await store.delete("pin", id: "a")
            try await store.deliverAcknowledgements([Acknowledgement(operationID: delete.operation, row: Kit.tombstone("a", at: 250))])
            #expect(try await store.record("pin", id: "a") == nil)
            #expect(try await store.currentState().snapshot.isEmpty)
            try await store.close()
        }
    }
}

import SyncJournalProtocol
import SyncJournalCore
import SyncJournalStore
import Testing

// operationsReadyToSend: what the engine may hand to a transport next.

@Suite("LocalStore: operationsReadyToSend")
struct LocalStoreReadyToSendTests {
    typealias Kit = StoreRulesKit

    /// A store with server records s1, s2 and a queue of: create a, update s1,
    /// create b, update s2, in that order.
    static func queuedStore(_ path: String) async throws -> (LocalStore, [OutboxOperation]) {
        let store = try await Kit.open(path)
        try await store.applyPulledPage(kind: "pin", rows: [Kit.row("s1", at: 100), Kit.row("s2", at: 200)], cursor: nil)
        try await store.create("pin", id: "a", fields: [:])
        try await store.update("pin", id: "s1", changes: ["x": .int(1)])
        try await store.create("pin", id: "b", fields: [:])
        try await store.update("pin", id: "s2", changes: ["x": .int(2)])
        return (store, try await store.outboxOperations())
    }

    @Test("operationsReadyToSend: operations come in queue order, not in record or kind order")
    func readyInQueueOrder() async throws {
        try await Kit.withScratch { scratch in
            let (store, ops) = try await Self.queuedStore(scratch.journal)
            #expect(ops.map(\.operation.recordID) == ["a", "s1", "b", "s2"])
            #expect(try await store.operationsReadyToSend(limit: 100) == ops)
            try await store.close()
        }
    }

    @Test("operationsReadyToSend: at most one operation per record, the first queued one")
    func atMostOnePerRecord() async throws {
        try await Kit.withScratch { scratch in
            let (store, ops) = try await Self.queuedStore(scratch.journal)
            // Send and finish the update of s1 (reply lost), so a second update of s1 queues behind it.
            try await store.beginSending([ops[1].id])
            await store.finishSending([ops[1].id])
            try await store.update("pin", id: "s1", changes: ["y": .int(3)])
            let pending = try await store.outboxOperations()
            #expect(pending.filter { $0.operation.recordID == "s1" }.count == 2)
            let ready = try await store.operationsReadyToSend(limit: 100)
            #expect(ready.map(\.id) == ops.map(\.id))
            #expect(Set(ready.map(\.key)).count == ready.count)
            try await store.close()
        }
    }

    @Test("operationsReadyToSend: nothing is offered for a record that has an operation in flight")
    func nothingForRecordInFlight() async throws {
        try await Kit.withScratch { scratch in
            let (store, ops) = try await Self.queuedStore(scratch.journal)
            try await store.beginSending([ops[0].id, ops[3].id])
            try await store.update("pin", id: "a", changes: ["later": .bool(true)])
            #expect(try await store.operationsReadyToSend(limit: 100).map(\.operation.recordID) == ["s1", "b"])
            await store.finishSending([ops[0].id])
            // The create of a is offered again (its reply never came); its update still waits behind it.
            #expect(try await store.operationsReadyToSend(limit: 100).map(\.operation.recordID) == ["a", "s1", "b"])
            #expect(try await store.operationsReadyToSend(limit: 100).first?.id == ops[0].id)
            try await store.close()
        }
    }

    @Test("operationsReadyToSend: respects the limit, taking the first operations in queue order")
    func respectsLimit() async throws {
        try await Kit.withScratch { scratch in
            let (store, ops) = try await Self.queuedStore(scratch.journal)
            #expect(try await store.operationsReadyToSend(limit: 1).map(\.id) == [ops[0].id])
            #expect(try await store.operationsReadyToSend(limit: 3).map(\.id) == ops.prefix(3).map(\.id))
            #expect(try await store.operationsReadyToSend(limit: 4).map(\.id) == ops.map(\.id))
            // In-flight records do not count against the limit.
            try await store.beginSending([ops[0].id])
            #expect(try await store.operationsReadyToSend(limit: 2).map(\.id) == [ops[1].id, ops[2].id])
            try await store.close()
        }
    }

    @Test("operationsReadyToSend: a limit of 0 offers nothing")
    func limitZeroOffersNothing() async throws {
        try await Kit.withScratch { scratch in
            let (store, _) = try await Self.queuedStore(scratch.journal)
            #expect(try await store.operationsReadyToSend(limit: 0).isEmpty)
            #expect(try await store.operationsReadyToSend(limit: -1).isEmpty)
            try await store.close()
        }
    }

    @Test("operationsReadyToSend: an excluded operation is skipped together with the rest of its record's queue")
    func excludedOperationSkipsItsRecord() async throws {
        try await Kit.withScratch { scratch in
            let (store, ops) = try await Self.queuedStore(scratch.journal)
            try await store.beginSending([ops[1].id])
            await store.finishSending([ops[1].id])
            try await store.update("pin", id: "s1", changes: ["y": .int(3)])  // queued behind the sent update of s1
            let ready = try await store.operationsReadyToSend(limit: 100, excluding: [ops[1].id])
            #expect(ready.map(\.operation.recordID) == ["a", "b", "s2"])
            try await store.close()
        }
    }

    @Test("operationsReadyToSend: an empty queue offers nothing")
    func emptyQueueOffersNothing() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            #expect(try await store.operationsReadyToSend(limit: 10).isEmpty)
            try await store.close()
        }
    }
}

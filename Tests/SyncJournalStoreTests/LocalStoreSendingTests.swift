import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import Testing

// Pending is not the same as sent: the set of operations in flight is memory
// only; before an operation is first handed to a transport the journal
// records durably that it may have reached the server.

@Suite("LocalStore: in flight vs sent")
struct LocalStoreSendingTests {
    typealias Kit = StoreRulesKit

    /// The ids of the journal's sent markers, in order.
    static func sentMarkers(_ path: String) throws -> [[OperationID]] {
        try Kit.records(path).filter { $0.type == RecordType.sentMarker }.map { record in
            guard case .sent(let ids)? = try StoreEvent.decode(record) else { return [] }
            return ids
        }
    }

    @Test("in flight vs sent: beginSending journals a sent marker durably BEFORE the operation is in flight")
    func sentMarkerIsDurableBeforeInFlight() async throws {
        try await Kit.withScratch { scratch in
            let held = SyncHoldingSystemCalls()
            let store = try await Kit.open(scratch.journal, system: held)
            try await store.create("pin", id: "a", fields: ["name": .string("Cafe")])
            let op = try #require(try await store.outboxOperations().first)
            #expect(try Self.sentMarkers(scratch.journal).isEmpty)

            // Hold the marker's fdatasync: the marker is written but not yet durable.
            held.holdNextSync()
            let sending = Task { try await store.beginSending([op.id]) }
            await held.waitUntilHeld()
            #expect(await store.isInFlight(op.id) == false, "not in flight while its sent marker is not durable")
            #expect(try await store.outboxOperations().first?.sent == false)
            #expect(try await store.operationsReadyToSend(limit: 10).map(\.id) == [op.id])
            held.release()
            _ = try await sending.value

            #expect(await store.isInFlight(op.id))
            #expect(try await store.outboxOperations().first?.sent == true)
            #expect(try Self.sentMarkers(scratch.journal) == [[op.id]])
            let last = try #require(try Kit.records(scratch.journal).last)
            #expect(last.type == RecordType.sentMarker)
            try await store.close()
        }
    }

    @Test("in flight vs sent: a beginSending whose sent marker cannot be journaled throws, and the operation is neither sent nor in flight")
    func failedSentMarkerLeavesOperationUnsent() async throws {
        try await Kit.withScratch { scratch in
            let faults = FaultInjectingSystemCalls()
            let store = try await Kit.open(scratch.journal, system: faults)
            try await store.create("pin", id: "a", fields: [:])
            let op = try #require(try await store.outboxOperations().first)
            faults.inject(.noSpace, into: .pwrite, on: .path(scratch.journal))
            #expect(await Kit.storeError { try await store.beginSending([op.id]) }?.caseName == "journal.io")
            #expect(await store.isInFlight(op.id) == false)
            #expect(try await store.outboxOperations().first?.sent == false)
            #expect(try Self.sentMarkers(scratch.journal).isEmpty)
            // So the compactor may still cancel it: create never sent + delete → both vanish.
            try await store.delete("pin", id: "a")
            #expect(try await store.outboxOperations().isEmpty)
            try await store.close()
        }
    }

    @Test("in flight vs sent: finishSending clears in flight but the sent flag stays; a second beginSending journals no second marker")
    func finishSendingKeepsSent() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "a", fields: [:])
            let op = try #require(try await store.outboxOperations().first)
            try await store.beginSending([op.id])
            #expect(await store.isInFlight(op.id))
            await store.finishSending([op.id])
            #expect(await store.isInFlight(op.id) == false)
            #expect(try await store.outboxOperations().first?.sent == true)
            // It is offered again (the reply was lost), and resending it adds no marker.
            #expect(try await store.operationsReadyToSend(limit: 10).map(\.id) == [op.id])
            let records = try Kit.recordCount(scratch.journal)
            try await store.beginSending([op.id])
            #expect(await store.isInFlight(op.id))
            #expect(try Kit.recordCount(scratch.journal) == records)
            #expect(try Self.sentMarkers(scratch.journal) == [[op.id]])
            try await store.close()
        }
    }

    @Test("in flight vs sent: after close and reopen nothing is in flight but the sent flags are kept, and the operation is offered again for resending")
    func reopenKeepsSentButNothingInFlight() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("s", at: 100)], cursor: nil)
            try await store.create("pin", id: "a", fields: [:])
            try await store.update("pin", id: "s", changes: ["x": .int(1)])
            try await store.create("pin", id: "b", fields: [:])
            let ops = try await store.outboxOperations()
            try await store.beginSending([ops[0].id, ops[1].id])  // a and s in flight, b never sent
            try await store.close()

            let reopened = try await Kit.open(scratch.journal)
            for op in ops { #expect(await reopened.isInFlight(op.id) == false) }
            #expect(try await reopened.outboxOperations().map(\.sent) == [true, true, false])
            #expect(try await reopened.operationsReadyToSend(limit: 10).map(\.id) == ops.map(\.id))
            try await reopened.close()
        }
    }

    @Test("in flight vs sent: beginSending with an unknown id marks nothing and journals nothing")
    func unknownIDIsNotMarked() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "a", fields: [:])
            let records = try Kit.recordCount(scratch.journal)
            let stranger = OperationID.random()
            try await store.beginSending([stranger])
            #expect(await store.isInFlight(stranger) == false)
            #expect(try Kit.recordCount(scratch.journal) == records)
            try await store.close()
        }
    }

    // The in-flight resurrection, one step earlier: the engine took the create from
    // operationsReadyToSend, the user deleted the record before the engine
    // called beginSending. The unsent create and the delete vanished together
    // (correct), but beginSending then returns normally: the engine cannot tell
    // that it must not hand the create to its transport, and the server would
    // create a record the user deleted, with no delete left to follow it.
    @Test("in flight vs sent: beginSending of an operation the compactor has removed leaves it out of what it returns, so a cancelled create is never sent")
    func beginSendingOfCancelledOperationIsRefused() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "a", fields: ["name": .string("Tapas bar")])
            let ready = try await store.operationsReadyToSend(limit: 10)
            #expect(ready.map(\.operation.kind) == [.create])
            try await store.delete("pin", id: "a")  // create never sent + delete → both vanish
            #expect(try await store.outboxOperations().isEmpty)

            let records = try Kit.recordCount(scratch.journal)
            let accepted = try await store.beginSending(ready.map(\.id))
            #expect(await store.isInFlight(ready[0].id) == false)
            #expect(try Kit.recordCount(scratch.journal) == records)
            #expect(accepted.isEmpty, "beginSending handed back an operation that no longer exists: \(accepted)")
            try await store.close()
        }
    }

    // The same race with the delete and beginSending queued behind one journal
    // write: beginSending decides which ids it knows before its batch runs,
    // the delete (earlier in the batch) cancels the create, and beginSending
    // then marks the vanished create as in flight.
    @MainActor
    @Test("in flight vs sent: a delete queued just before beginSending cancels the unsent create, and the create is then not reported in flight")
    func concurrentDeleteAndBeginSending() async throws {
        try await Kit.withScratch { scratch in
            let held = SyncHoldingSystemCalls()
            let store = try await Kit.open(scratch.journal, system: held)
            try await store.create("pin", id: "a", fields: ["name": .string("Tapas bar")])
            let create = try #require(try await store.operationsReadyToSend(limit: 10).first)

            // An unrelated write holds the journal's sync, and a checkpoint
            // queued behind it waits for that sync: nothing queued behind the
            // checkpoint is written until the sync is released, so the next
            // calls queue together, in the order they reach the batcher.
            held.holdNextSync()
            let unrelated = Task { try await store.create("pin", id: "x", fields: [:]) }
            await held.waitUntilHeld()
            let checkpoint = Task { try await store.checkpoint() }
            while await store.changesWaitingForBatch < 1 { await Task.yield() }
            let deleting = Task { try await store.delete("pin", id: "a") }
            while await store.changesWaitingForBatch < 2 { await Task.yield() }
            let sending = Task { try await store.beginSending([create.id]) }
            while await store.changesWaitingForBatch < 3 { await Task.yield() }
            held.release()
            _ = try await unrelated.value
            try await checkpoint.value
            _ = try await deleting.value
            let accepted = try await sending.value

            let pending = try await store.outboxOperations()
            let createQueued = pending.contains { $0.id == create.id }
            let stillInFlight = await store.isInFlight(create.id)
            if createQueued {
                // beginSending ran first: the create is sent and the delete queues behind it (correct),
                // but the interleaving this test is about did not happen.
                Issue.record("the calls were not queued in the order this test relies on; nothing was checked")
            } else {
                // The delete ran first and cancelled the create.
                #expect(stillInFlight == false, "a create that no longer exists is reported in flight")
                #expect(accepted.isEmpty, "beginSending handed back a create the compactor removed")
            }
            try await store.close()
        }
    }
}

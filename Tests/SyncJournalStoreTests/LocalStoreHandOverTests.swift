import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import Testing

// A push round is two store calls: one hands a batch over (picked, journaled
// as possibly sent, in flight), one keeps the reply and ends the hand-over.

@Suite("LocalStore: a push round's hand-over and its end")
struct LocalStoreHandOverTests {
    typealias Kit = StoreRulesKit

    @Test("hand-over: beginSending(limit:excluding:) picks the first operation of each record, skips excluded records, journals one sent marker and marks the batch in flight")
    func beginSendingPicksMarksAndHandsOver() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 10), Kit.row("b", at: 10), Kit.row("c", at: 10)], cursor: nil)
            try await store.update("pin", id: "a", changes: ["n": .int(1)])
            try await store.update("pin", id: "b", changes: ["n": .int(1)])
            try await store.update("pin", id: "c", changes: ["n": .int(1)])
            let queued = try await store.outboxOperations()
            let first = try await store.beginSending(limit: 1, excluding: [])
            #expect(first.operations.map(\.id) == [queued[0].id])
            #expect(first.newlyMarked == [queued[0].id])
            let allSent = first.operations.allSatisfy { $0.sent }
            #expect(allSent)
            #expect(await store.isInFlight(queued[0].id))

            // In flight and excluded operations are skipped; the rest go in one marker.
            let second = try await store.beginSending(limit: 10, excluding: [queued[2].id])
            #expect(second.operations.map(\.id) == [queued[1].id])
            let markers = try Kit.records(scratch.journal).filter { $0.type == RecordType.sentMarker }
            #expect(markers.count == 2)
            #expect(try await store.outboxOperations().map(\.sent) == [true, true, false])
            let none = try await store.beginSending(limit: 10, excluding: [queued[2].id])
            #expect(none.isEmpty)
            #expect(try Kit.records(scratch.journal).filter { $0.type == RecordType.sentMarker }.count == 2, "an empty hand-over writes nothing")
            try await store.close()
        }
    }

    @Test("hand-over: endSending keeps a reply, reports conflicts and quarantines, and nothing stays in flight")
    func endSendingKeepsReplyAndEndsHandOver() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 10), Kit.row("b", at: 10), Kit.row("c", at: 10)], cursor: nil)
            for id in ["a", "b", "c"] { try await store.update("pin", id: id, changes: ["n": .int(1)]) }
            let batch = try await store.beginSending(limit: 10, excluding: [])
            let ids = batch.operations.map(\.id)
            #expect(ids.count == 3)
            let before = try Kit.recordCount(scratch.journal)
            let end = try await store.endSending(ids, outcomes: [
                (ids[0], .acknowledged(Kit.row("a", at: 11, ["n": .int(1)]))),
                (ids[1], .conflicted(server: Kit.row("b", at: 12, ["n": .int(2)]))),
                (ids[2], .failure(.deletedOrNoAccess, reason: "gone")),
            ])
            #expect(end.conflicts == 1)
            #expect(end.quarantined == [ids[2]])
            #expect(try Kit.recordCount(scratch.journal) == before + 3, "an acknowledgement, a conflict and a quarantine")
            for id in ids { #expect(await store.isInFlight(id) == false) }
            #expect(try await store.outboxOperations().map(\.id) == [ids[2]])
            #expect(try await store.quarantinedOperations().map(\.id) == [ids[2]])
            try await store.close()
        }
    }

    @Test("hand-over: endSending refuses a reply with a row of another record whole, keeps nothing, and still ends the hand-over")
    func endSendingRefusesMalformedReplyWhole() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 10), Kit.row("b", at: 10)], cursor: nil)
            for id in ["a", "b"] { try await store.update("pin", id: id, changes: ["n": .int(1)]) }
            let batch = try await store.beginSending(limit: 10, excluding: [])
            let ids = batch.operations.map(\.id)
            let before = try Kit.recordCount(scratch.journal)
            let error = await Kit.storeError {
                try await store.endSending(ids, outcomes: [
                    (ids[0], .acknowledged(Kit.row("a", at: 11))),
                    (ids[1], .acknowledged(Kit.row("a", at: 11))),
                ])
            }
            #expect(error?.caseName == "invalidServerData")
            #expect(try Kit.recordCount(scratch.journal) == before)
            for id in ids { #expect(await store.isInFlight(id) == false) }
            #expect(try await store.outboxOperations().map(\.id) == ids)
            try await store.close()
        }
    }
}

import Foundation
import SyncJournalPlatform
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import Testing

// `LocalStore.write`: several edits checked all or nothing, journaled as one
// transaction record, visible and replayed together.

@Suite("LocalStore: write transactions")
struct LocalStoreTransactionTests {
    typealias Kit = StoreRulesKit

    @Test("a write journals its creates, updates and deletes across kinds as one transaction record and returns one edit per staged change, in order")
    func writeIsOneRecord() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("srv", at: 100, ["name": .string("Cafe")])], cursor: nil)
            let before = try Kit.recordCount(scratch.journal)
            let edits = try await store.write { tx in
                try tx.create("note", id: "n1", fields: ["text": .string("hello")])
                try tx.update("pin", id: "srv", changes: ["visited": .bool(true)])
                try tx.create("pin", id: "p2", fields: ["name": .string("Bar")])
                try tx.delete("pin", id: "p2")
            }
            #expect(edits.map(\.kind) == ["note", "pin", "pin", "pin"])
            #expect(edits.map(\.id) == ["n1", "srv", "p2", "p2"])
            #expect(Set(edits.map(\.operation)).count == 4)
            let records = try Kit.records(scratch.journal)
            #expect(records.count == before + 1)
            #expect(records.last?.type == .transaction)
            #expect(try await store.record("note", id: "n1")?.fields == ["text": .string("hello")])
            #expect(try await store.record("pin", id: "srv")?.fields == ["name": .string("Cafe"), "visited": .bool(true)])
            #expect(try await store.record("pin", id: "p2") == nil)
            // The create and delete of p2 compacted away, as single edits would.
            let queued = try await store.outboxOperations()
            #expect(queued.map(\.id) == [edits[0].operation, edits[1].operation])
            #expect(queued[1].operation.baseUpdatedAt == 100)
            let state = try await store.currentState()
            try await store.close()
            #expect(try Replayer.replay(path: scratch.journal).state == state)
        }
    }

    @Test("an update of a record created earlier in the same write applies on top of it; the compactor merges it into the create")
    func updateOfRecordCreatedInSameWrite() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let edits = try await store.write { tx in
                let created = try tx.create("pin", fields: ["name": .string("Tapas")])
                try tx.update("pin", id: created.id, changes: ["rating": .int(5)])
            }
            #expect(edits.count == 2 && edits[0].id == edits[1].id)
            #expect(try await store.record("pin", id: edits[0].id)?.fields == ["name": .string("Tapas"), "rating": .int(5)])
            let queued = try await store.outboxOperations()
            #expect(queued.count == 1)
            #expect(queued.first?.operation.kind == .create && queued.first?.operation.id == edits[0].operation)
            #expect(queued.first?.operation.baseUpdatedAt == nil)
            try await store.close()
        }
    }

    @Test("an update of a missing record fails the whole write with recordNotFound naming its kind and id, and nothing is journaled or visible")
    func missingRecordFailsEverything() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let before = try Kit.recordCount(scratch.journal)
            let error = await Kit.storeError {
                try await store.write { tx in
                    try tx.create("pin", id: "a", fields: ["name": .string("A")])
                    try tx.update("note", id: "ghost", changes: ["text": .string("x")])
                }
            }
            #expect(error == .recordNotFound(RecordKey(kind: "note", id: "ghost")))
            #expect(try Kit.recordCount(scratch.journal) == before)
            #expect(try await store.record("pin", id: "a") == nil)
            #expect(try await store.outboxOperations().isEmpty)
            // A second create of a record created earlier in the same write is refused.
            let again = await Kit.storeError {
                try await store.write { tx in
                    try tx.create("pin", id: "a", fields: [:])
                    try tx.create("pin", id: "a", fields: [:])
                }
            }
            #expect(again == .recordAlreadyExists(RecordKey(kind: "pin", id: "a")))
            #expect(try Kit.recordCount(scratch.journal) == before)
            try await store.close()
        }
    }

    @Test("a body that throws writes nothing, and its error is the write's error")
    func throwingBodyWritesNothing() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let before = try Kit.recordCount(scratch.journal)
            let error = await Kit.storeError {
                try await store.write { tx in
                    try tx.create("pin", id: "a", fields: [:])
                    try tx.create("", id: "b", fields: [:])
                }
            }
            #expect(error == .emptyKind)
            #expect(try Kit.recordCount(scratch.journal) == before)
            #expect(try await store.records("pin").isEmpty)
            #expect(try await store.write { _ in }.isEmpty, "an empty write returns no edits")
            #expect(try Kit.recordCount(scratch.journal) == before, "and writes nothing")
            try await store.close()
        }
    }

    @Test("a write of one edit is journaled as a plain operation record, readable by every version")
    func singleEditIsPlainRecord() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let edits = try await store.write { tx in try tx.create("pin", id: "a", fields: [:]) }
            #expect(edits.map(\.id) == ["a"])
            #expect(try Kit.records(scratch.journal).last?.type == .operation)
            try await store.close()
        }
    }

    @Test("a write larger than one journal record holds fails with tooLarge and journals nothing")
    func oversizedWriteFails() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let before = try Kit.recordCount(scratch.journal)
            let big = FieldValue.bytes(Array(repeating: 7, count: JournalFormat.maximumPayloadLength / 3))
            let error = await Kit.storeError {
                try await store.write { tx in
                    for index in 0..<4 { try tx.create("blob", id: "b\(index)", fields: ["data": big]) }
                }
            }
            #expect(error?.caseName == "tooLarge")
            #expect(try Kit.recordCount(scratch.journal) == before)
            #expect(try await store.records("blob").isEmpty)
            try await store.close()
        }
    }

    @Test("the edits of a write replay together after reopening: same records, same queue, each edit its own operation")
    func writeReplaysOnOpen() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "old", fields: ["name": .string("Old")])
            let edits = try await store.write { tx in
                try tx.update("pin", id: "old", changes: ["name": .string("New")])
                try tx.create("trip", id: "t", fields: ["stops": .int(2)])
                try tx.create("stop", id: "s1", fields: ["trip": .string("t")])
            }
            let state = try await store.currentState()
            try await store.close()
            let reopened = try await Kit.open(scratch.journal)
            #expect(try await reopened.currentState() == state)
            #expect(try await reopened.outboxOperations().map(\.id).contains(edits[2].operation))
            #expect(try await reopened.record("pin", id: "old")?.fields == ["name": .string("New")])
            try await reopened.close()
        }
    }

    @Test("a write's body runs on the caller's actor, so it may read the caller's state")
    @MainActor
    func bodyRunsOnCallersActor() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            var names = ["a", "b"]
            let edits = try await store.write { tx in
                MainActor.assertIsolated()
                for name in names { try tx.create("pin", id: name, fields: [:]) }
                names.removeAll()
            }
            #expect(edits.count == 2 && names.isEmpty)
            try await store.close()
        }
    }

    @Test("a reader that does not know the transaction type stops there as unsupported, read-only, instead of skipping it")
    func olderReaderRefusesTransaction() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "a", fields: [:])
            try await store.write { tx in
                try tx.update("pin", id: "a", changes: ["n": .int(1)])
                try tx.create("pin", id: "b", fields: [:])
            }
            try await store.close()
            let transaction = try #require(try Kit.records(scratch.journal).first { $0.type == .transaction })
            let older: @Sendable (RecordType) -> Bool = { $0 != .transaction && StoreEvent.isUnderstood($0) }
            let report = try JournalReader(path: scratch.journal, understands: older).scan()
            guard case .unsupported(let offset, _) = report.status else {
                Issue.record("expected unsupported, found \(report.status)")
                return
            }
            #expect(offset == transaction.offset)
        }
    }

    @Test("salvage copies a transaction record as it is, and the copy replays to the same state")
    func salvageKeepsTransactions() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.write { tx in
                try tx.create("trip", id: "t", fields: ["name": .string("Lisbon")])
                try tx.create("stop", id: "s", fields: ["trip": .string("t")])
            }
            let state = try await store.currentState()
            try await store.close()
            let copy = scratch.file("salvaged.journal")
            _ = try await JournalSalvage.salvage(from: scratch.journal, to: copy)
            #expect(try Kit.records(copy).contains { $0.type == .transaction })
            #expect(try Replayer.replay(path: copy).state == state)
        }
    }

    @Test("the keys a transaction touches are every record it edits, across kinds, including one its own compaction removes")
    func transactionTouchesEveryKey() throws {
        let operations = [
            JournalOperation(id: .random(), kind: .create, entity: "trip", recordID: "t", fields: [:], queuedAt: 0),
            JournalOperation(id: .random(), kind: .create, entity: "stop", recordID: "s", fields: [:], queuedAt: 0),
            JournalOperation(id: .random(), kind: .delete, entity: "stop", recordID: "s", queuedAt: 0),
        ]
        let events = try LocalStore.transaction(operations, in: StoreState())
        #expect(events.count == 1)
        let event = try #require(events.first)
        var touched: [RecordKey] = []
        StoreState().collectKeys(touchedBy: event, into: &touched)
        #expect(Set(touched) == [RecordKey(kind: "trip", id: "t"), RecordKey(kind: "stop", id: "s")])
    }
}

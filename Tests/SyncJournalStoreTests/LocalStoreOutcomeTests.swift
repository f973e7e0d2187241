import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import Testing

// What the sync engine reports back: acknowledgements, failures, conflicts.

@Suite("LocalStore: engine-facing outcomes")
struct LocalStoreOutcomeTests {
    typealias Kit = StoreRulesKit

    @Test("outcomes: an acknowledgement removes the operation and the snapshot takes the server's row")
    func acknowledgeUpdatesSnapshot() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100, ["name": .string("Cafe")])], cursor: nil)
            try await store.update("pin", id: "a", changes: ["rating": .int(5)])
            try await store.create("pin", id: "b", fields: ["name": .string("Bar")])
            let ops = try await store.outboxOperations()
            try await store.beginSending(ops.map(\.id))
            try await store.deliverAcknowledgements([
                Acknowledgement(operationID: ops[0].id, row: Kit.row("a", at: 150, ["name": .string("Cafe"), "rating": .int(5), "by": .string("server")])),
                Acknowledgement(operationID: ops[1].id, row: Kit.row("b", at: 160, ["name": .string("Bar")])),
            ])
            await store.finishSending(ops.map(\.id))
            #expect(try await store.outboxOperations().isEmpty)
            let state = try await store.currentState()
            #expect(state.snapshot[RecordKey(kind: "pin", id: "a")] == Kit.row("a", at: 150, ["name": .string("Cafe"), "rating": .int(5), "by": .string("server")]))
            #expect(state.snapshot[RecordKey(kind: "pin", id: "b")]?.updatedAt == 160)
            #expect(try await store.record("pin", id: "a")?.hasPendingChanges == false)
            #expect(try await store.record("pin", id: "a")?.fields["by"] == .string("server"))
            let reopened = try await LocalStoreCompactionTests.reopen(store)
            try await reopened.close()
        }
    }

    @Test("outcomes: acknowledging a delete with a tombstone row removes the record from the snapshot")
    func acknowledgedDeleteTombstoneRemovesRecord() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100, ["name": .string("Cafe")])], cursor: nil)
            try await store.delete("pin", id: "a")
            let delete = try #require(try await store.outboxOperations().first)
            try await store.beginSending([delete.id])
            try await store.deliverAcknowledgements([Acknowledgement(operationID: delete.id, row: Kit.tombstone("a", at: 300))])
            await store.finishSending([delete.id])
            #expect(try await store.outboxOperations().isEmpty)
            #expect(try await store.currentState().snapshot.isEmpty)
            #expect(try await store.record("pin", id: "a") == nil)
            #expect(try await store.records("pin").isEmpty)
            // The id is free again: a create of it has no base.
            try await store.create("pin", id: "a", fields: [:])
            #expect(try await store.outboxOperations().first?.operation.baseUpdatedAt == nil)
            try await store.close()
        }
    }

    @Test("outcomes: a transient refusal increments attempts and sets lastError; the operation stays queued and is offered again")
    func transientFailureCountsAttempts() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "a", fields: [:])
            let op = try #require(try await store.outboxOperations().first)
            try await store.beginSending([op.id])
            try await store.deliverFailure(op.id, reason: "timeout", permanent: false)
            await store.finishSending([op.id])
            try await store.beginSending([op.id])
            try await store.deliverFailure(op.id, reason: "HTTP 503", permanent: false)
            await store.finishSending([op.id])
            let entry = try #require(try await store.outboxOperations().first)
            #expect(entry.id == op.id)
            #expect(entry.attempts == 2)
            #expect(entry.lastError == "HTTP 503")
            #expect(entry.sent)
            #expect(try await store.rejections().isEmpty)
            #expect(try await store.operationsReadyToSend(limit: 10).map(\.id) == [op.id])
            let reopened = try await LocalStoreCompactionTests.reopen(store)
            #expect(try await reopened.outboxOperations().first?.attempts == 2)
            #expect(try await reopened.outboxOperations().first?.lastError == "HTTP 503")
            try await reopened.close()
        }
    }

    @Test("outcomes: a permanent failure is counted and the operation stays queued and visible; at maximumPermanentFailures (3) it is quarantined, rejections() stays empty, and the view falls back to the server copy")
    func permanentFailuresQuarantineAtTheLimit() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100, ["name": .string("Cafe")])], cursor: nil)
            try await store.update("pin", id: "a", changes: ["name": .string("Mine")])
            let op = try #require(try await store.outboxOperations().first)
            try await store.beginSending([op.id])
            try await store.deliverFailure(op.id, reason: "timeout", permanent: false)
            try await store.deliverFailure(op.id, reason: "forbidden", permanent: true)
            try await store.deliverFailure(op.id, reason: "forbidden again", permanent: true)
            await store.finishSending([op.id])
            // Two permanent failures of three: still queued, still shown, still sendable.
            var entry = try #require(try await store.outboxOperations().first)
            #expect(entry.id == op.id)
            #expect(entry.attempts == 3)
            #expect(entry.permanentFailures == 2)
            #expect(entry.lastFailure == .permanent)
            #expect(entry.lastError == "forbidden again")
            #expect(!entry.quarantined)
            #expect(try await store.record("pin", id: "a")?.fields == ["name": .string("Mine")])
            #expect(try await store.operationsReadyToSend(limit: 10).map(\.id) == [op.id])

            try await store.deliverFailure(op.id, reason: "forbidden for good", permanent: true)
            entry = try #require(try await store.outboxOperations().first)
            #expect(entry.id == op.id && entry.operation == op.operation)
            #expect(entry.attempts == 4)
            #expect(entry.permanentFailures == 3)
            #expect(entry.quarantined)
            #expect(entry.lastError == "forbidden for good")
            #expect(try await store.quarantinedOperations() == [OutboxEntryStatus(entry, inFlight: false)])
            #expect(try await store.rejections().isEmpty)
            #expect(try await store.operationsReadyToSend(limit: 10).isEmpty)
            #expect(try await store.record("pin", id: "a")?.fields == ["name": .string("Cafe")])
            let reopened = try await LocalStoreCompactionTests.reopen(store)
            #expect(try await reopened.quarantinedOperations() == [OutboxEntryStatus(entry, inFlight: false)])
            #expect(try await reopened.rejections().isEmpty)
            try await reopened.close()
        }
    }

    @Test("outcomes: a conflict (server wins by default) keeps the server's copy and surfaces a ConflictRecord with the local operation, its base row and the resolution")
    func conflictKeepsServerCopy() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100, ["name": .string("Cafe")])], cursor: nil)
            try await store.update("pin", id: "a", changes: ["name": .string("Mine")])
            let op = try #require(try await store.outboxOperations().first)
            try await store.beginSending([op.id])
            let server = Kit.row("a", at: 250, ["name": .string("Theirs")])
            try await store.deliverConflict(op.id, server: server)
            await store.finishSending([op.id])

            #expect(try await store.outboxOperations().isEmpty)
            #expect(try await store.record("pin", id: "a")?.fields == ["name": .string("Theirs")])
            #expect(try await store.record("pin", id: "a")?.serverUpdatedAt == 250)
            let conflicts = try await store.conflicts()
            #expect(conflicts.count == 1)
            #expect(conflicts.first?.operation == op.operation)
            #expect(conflicts.first?.base == 100)
            #expect(conflicts.first?.server == server)
            #expect(conflicts.first?.baseRow == Kit.row("a", at: 100, ["name": .string("Cafe")]))
            #expect(conflicts.first?.shape == .bothUpdated)
            #expect(conflicts.first?.resolution == ConflictResolution(strategy: .serverWins, replacement: nil, lostFields: ["name"]))
            let reopened = try await LocalStoreCompactionTests.reopen(store)
            #expect(try await reopened.conflicts() == conflicts)
            try await reopened.close()
        }
    }

    @Test("outcomes: a conflict with no server copy (the server deleted it) removes the record")
    func conflictWithoutServerCopyRemovesRecord() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100, ["name": .string("Cafe")])], cursor: nil)
            try await store.update("pin", id: "a", changes: ["name": .string("Mine")])
            let op = try #require(try await store.outboxOperations().first)
            try await store.beginSending([op.id])
            try await store.deliverConflict(op.id, server: nil)
            await store.finishSending([op.id])
            #expect(try await store.record("pin", id: "a") == nil)
            #expect(try await store.currentState().snapshot.isEmpty)
            let conflicts = try await store.conflicts()
            #expect(conflicts.map(\.operation) == [op.operation])
            #expect(conflicts.first?.server == nil)
            #expect(conflicts.first?.base == 100)
            #expect(conflicts.first?.shape == .updatedButDeletedOnServer)
            #expect(conflicts.first?.resolution.replacement == nil)
            try await store.close()
        }
    }

    @Test("outcomes: a conflict copy of another record is refused as invalid server data and changes nothing")
    func conflictCopyOfAnotherRecordIsRefused() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [Kit.row("a", at: 100)], cursor: nil)
            try await store.update("pin", id: "a", changes: ["x": .int(1)])
            let op = try #require(try await store.outboxOperations().first)
            let before = try await store.currentState()
            #expect(await Kit.storeError { try await store.deliverConflict(op.id, server: Kit.row("b", at: 200)) }?.caseName == "invalidServerData")
            #expect(await Kit.storeError {
                try await store.deliverAcknowledgements([Acknowledgement(operationID: op.id, row: Kit.row("b", at: 200))])
            }?.caseName == "invalidServerData")
            #expect(try await store.currentState() == before)
            try await store.close()
        }
    }

    @Test("outcomes: acknowledging, failing or conflicting an unknown operation id is ignored without writing")
    func unknownIDsAreIgnoredWithoutWriting() async throws {
        try await Kit.withScratch { scratch in
            let faults = FaultInjectingSystemCalls()
            let store = try await Kit.open(scratch.journal, system: faults)
            try await store.create("pin", id: "a", fields: [:])
            let records = try Kit.recordCount(scratch.journal)
            let before = try await store.currentState()
            let writes = faults.callCount(.pwrite, on: .path(scratch.journal))
            let stranger = OperationID.random()

            try await store.deliverAcknowledgements([Acknowledgement(operationID: stranger, row: Kit.row("a", at: 100))])
            try await store.deliverFailure(stranger, reason: "late", permanent: false)
            try await store.deliverFailure(stranger, reason: "late", permanent: true)
            try await store.deliverConflict(stranger, server: Kit.row("a", at: 100))

            #expect(try Kit.recordCount(scratch.journal) == records)
            #expect(faults.callCount(.pwrite, on: .path(scratch.journal)) == writes)
            #expect(try await store.currentState() == before)

            // A late duplicate of a reply already applied is also ignored.
            let op = try #require(try await store.outboxOperations().first)
            try await store.beginSending([op.id])
            try await store.deliverAcknowledgements([Acknowledgement(operationID: op.id, row: Kit.row("a", at: 100))])
            let afterFirst = try Kit.recordCount(scratch.journal)
            try await store.deliverAcknowledgements([Acknowledgement(operationID: op.id, row: Kit.row("a", at: 999))])
            #expect(try Kit.recordCount(scratch.journal) == afterFirst)
            #expect(try await store.record("pin", id: "a")?.serverUpdatedAt == 100)
            try await store.close()
        }
    }
}

import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import Testing

// The store's lifecycle (a broken file gets the same respect as a healthy one;
// a store can be retired): an unreadable journal is never overwritten, a
// torn tail is repaired, one store per journal, and a retired store never
// writes again, so a late reply cannot overwrite a store reopened on the file.

@Suite("LocalStore: lifecycle")
struct LocalStoreLifecycleTests {
    typealias Kit = StoreRulesKit

    // MARK: Unreadable, torn, locked

    @Test("lifecycle: a corrupt journal opens the store unreadable; reads throw unreadable, edits and sync are refused, and the file is never modified")
    func corruptJournalIsUnreadable() async throws {
        try await Kit.withScratch { scratch in
            try Kit.copySample("corrupt-middle.journal", to: scratch.journal)
            let original = try #require(Kit.bytes(scratch.journal))

            let store = try await Kit.open(scratch.journal)
            guard case .unreadable(.corrupt(offset: _?, detail: _)) = await store.status else {
                Issue.record("status is \(await store.status), expected .unreadable(.corrupt) at an offset")
                return
            }
            #expect(store.recovery == nil)
            // Reads say so.
            #expect(await Kit.storeError { _ = try await store.record("pin", id: "p-cafe") }?.caseName == "unreadable")
            #expect(await Kit.storeError { _ = try await store.records("pin") }?.caseName == "unreadable")
            #expect(await Kit.storeError { _ = try await store.outboxOperations() }?.caseName == "unreadable")
            #expect(await Kit.storeError { _ = try await store.currentState() }?.caseName == "unreadable")
            #expect(await Kit.storeError { _ = try await store.conflicts() }?.caseName == "unreadable")
            #expect(await Kit.storeError { _ = try await store.cursor(for: "pin") }?.caseName == "unreadable")
            // Edits and sync are refused.
            #expect(await Kit.storeError { try await store.create("pin", id: "new", fields: [:]) }?.caseName == "unreadable")
            #expect(await Kit.storeError { try await store.update("pin", id: "p-cafe", changes: ["x": .int(1)]) }?.caseName == "unreadable")
            #expect(await Kit.storeError { try await store.delete("pin", id: "p-cafe") }?.caseName == "unreadable")
            #expect(await Kit.storeError { try await store.applyPulledPage(kind: "pin", rows: [Kit.row("p-cafe", at: 1)], cursor: nil) }?.caseName == "unreadable")
            #expect(await Kit.storeError { _ = try await store.operationsReadyToSend(limit: 10) }?.caseName == "unreadable")
            #expect(await Kit.storeError { try await store.beginSending([OperationID.random()]) }?.caseName == "unreadable")
            #expect(await Kit.storeError { try await store.checkpoint() }?.caseName == "unreadable")
            #expect(Kit.bytes(scratch.journal) == original)

            try await store.close()
            #expect(Kit.bytes(scratch.journal) == original)
            // Reopening finds it just as unreadable: nothing was "repaired".
            let again = try await Kit.open(scratch.journal)
            guard case .unreadable = await again.status else {
                Issue.record("status after reopening is \(await again.status)")
                return
            }
            try await again.close()
            #expect(Kit.bytes(scratch.journal) == original)
        }
    }

    @Test("lifecycle: a journal a newer version wrote (a record type or reserved field this version does not know) opens unreadable as a newer format, not as corrupt",
          arguments: ["unknown-type.journal", "reserved-field.journal"])
    func newerJournalIsUnreadableAsNewerFormat(_ sample: String) async throws {
        try await Kit.withScratch { scratch in
            try Kit.copySample(sample, to: scratch.journal)
            let original = try #require(Kit.bytes(scratch.journal))
            let store = try await Kit.open(scratch.journal)
            guard case .unreadable(.newerFormat) = await store.status else {
                Issue.record("\(sample): status is \(await store.status), expected .unreadable(.newerFormat)")
                return
            }
            guard case .unreadable(_, .newerFormat) = await Kit.storeError({ _ = try await store.records("pin") }) else {
                Issue.record("\(sample): reads do not say the journal is from a newer version")
                return
            }
            try await store.close()
            #expect(Kit.bytes(scratch.journal) == original)
        }
    }

    @Test("lifecycle: salvage(to:) of an unreadable store writes a new readable journal and leaves the original as it was")
    func salvageWritesNewJournalAndKeepsOriginal() async throws {
        try await Kit.withScratch { scratch in
            try Kit.copySample("corrupt-middle.journal", to: scratch.journal)
            let original = try #require(Kit.bytes(scratch.journal))
            let store = try await Kit.open(scratch.journal)
            let destination = scratch.file("salvaged.journal")
            let result = try await store.salvage(to: destination)
            #expect(result.prefixRecords == 2)
            #expect(Kit.bytes(scratch.journal) == original)
            guard case .unreadable = await store.status else {
                Issue.record("the store itself stays unreadable after salvage, got \(await store.status)")
                return
            }
            try await store.close()

            let salvaged = try await Kit.open(destination)
            #expect(await salvaged.status == .ready)
            #expect(try await salvaged.records("pin").map(\.id) == ["p-cafe", "p-museum"])
            #expect(try await salvaged.outboxOperations().count == 2)
            try await salvaged.close()
            #expect(Kit.bytes(scratch.journal) == original)
        }
    }

    @Test("lifecycle: a journal with a torn tail opens ready, with the cut reported in recovery")
    func tornTailOpensReadyWithRecovery() async throws {
        try await Kit.withScratch { scratch in
            try Kit.copySample("torn-tail.journal", to: scratch.journal)
            let store = try await Kit.open(scratch.journal)
            #expect(await store.status == .ready)
            let recovery = try #require(store.recovery)
            #expect(recovery.bytesCut == 40)
            #expect(recovery.recordCount == 6)
            #expect(recovery.created == false)
            if case .tornTail(let offset, _) = recovery.statusFound { #expect(offset == 814) } else {
                Issue.record("statusFound is \(recovery.statusFound)")
            }
            let side = try #require(recovery.sideFile)
            #expect((try? TornTailFile.read(path: side))?.tailLength == 40)
            #expect(Kit.bytes(scratch.journal)?.count == 814)

            // The records before the cut are replayed: the create of p-cafe
            // is visible, p-museum was created and deleted.
            #expect(try await store.record("pin", id: "p-cafe")?.fields["name"] == .string("Café Kranz"))
            #expect(try await store.record("pin", id: "p-museum") == nil)
            #expect(try await store.record("note", id: "n-1") != nil)
            // And the store writes on after the cut.
            try await store.create("pin", id: "p-new", fields: [:])
            let live = try await store.currentState()
            try await store.close()
            let reopened = try await Kit.open(scratch.journal)
            #expect(reopened.recovery?.bytesCut == 0)
            #expect(try await reopened.currentState() == live)
            try await reopened.close()
        }
    }

    @Test("lifecycle: a second LocalStore.open on the same path while one is open throws StoreError.cannotOpen naming the locked journal")
    func secondOpenIsLocked() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "a", fields: [:])
            let error = await Kit.storeError { _ = try await Kit.open(scratch.journal) }
            #expect(error == .cannotOpen(path: scratch.journal, cause: .locked(path: scratch.journal)))
            // The first store is unaffected.
            try await store.create("pin", id: "b", fields: [:])
            try await store.close()
            let reopened = try await Kit.open(scratch.journal)
            #expect(try await reopened.records("pin").map(\.id) == ["a", "b"])
            try await reopened.close()
        }
    }

    // MARK: Retirement

    /// A request the "transport" holds open until the test replies: the
    /// suspended fetch of a store that is retired while a request is open.
    actor HeldRequest {
        private var waiting: CheckedContinuation<[ServerRow], Never>?
        private let started: AsyncStream<Void>
        private let startedContinuation: AsyncStream<Void>.Continuation

        init() { (started, startedContinuation) = AsyncStream.makeStream(of: Void.self) }

        /// The engine's await on the network.
        func fetch() async -> [ServerRow] {
            await withCheckedContinuation { continuation in
                waiting = continuation
                startedContinuation.yield()
            }
        }

        /// Returns once a fetch is waiting.
        nonisolated func waitUntilStarted() async {
            for await _ in started { return }
        }

        /// The reply lands.
        func reply(_ rows: [ServerRow]) {
            waiting?.resume(returning: rows)
            waiting = nil
        }
    }

    @Test("lifecycle: retirement: suspend a fetch, retire, reopen the store on the same file, remove the record through it, let the old reply land: the removal is still there")
    func lateReplyAfterRetireCannotOverwriteReopenedStore() async throws {
        try await Kit.withScratch { scratch in
            let faults = FaultInjectingSystemCalls()
            let storeA = try await Kit.open(scratch.journal, system: faults)
            try await storeA.applyPulledPage(kind: "pin", rows: [Kit.row("p", at: 100, ["name": .string("Tapas bar")]),
                                                                 Kit.row("q", at: 100, ["name": .string("Museum")])],
                                             cursor: PullCursor(updatedAt: 100, id: "q"))
            // A push is also open: an update of q is in flight.
            try await storeA.update("pin", id: "q", changes: ["visited": .bool(true)])
            let push = try #require(try await storeA.operationsReadyToSend(limit: 10).first)
            try await storeA.beginSending([push.id])

            // The engine's pull is suspended on the network.
            let transport = HeldRequest()
            let engine = Task { () async throws -> Void in
                let rows = await transport.fetch()
                // Guarded exactly like the seed's sync loop: the reply goes to the store the request came from.
                try await storeA.applyPulledPage(kind: "pin", rows: rows, cursor: PullCursor(updatedAt: 200, id: "p"))
            }
            await transport.waitUntilStarted()

            // The app switches endpoint and back: store A is retired, store B opened on the same file.
            await storeA.retire()
            #expect(await storeA.status == .retired)
            let writesAfterRetire = faults.callCount(.pwrite, on: .path(scratch.journal))
            let storeB = try await Kit.open(scratch.journal)
            #expect(try await storeB.record("pin", id: "p") != nil)
            try await storeB.delete("pin", id: "p")
            #expect(try await storeB.record("pin", id: "p") == nil)
            let journalAfterRemoval = try #require(Kit.bytes(scratch.journal))

            // The old reply lands: p as the server had it before the removal.
            await transport.reply([Kit.row("p", at: 200, ["name": .string("Tapas bar (renamed)")])])
            let landed = await Kit.storeError { try await engine.value }
            #expect(landed == .retired)
            // So do the replies of the open push.
            #expect(await Kit.storeError { try await storeA.deliverAcknowledgements([Acknowledgement(operationID: push.id, row: Kit.row("q", at: 300))]) } == .retired)
            #expect(await Kit.storeError { try await storeA.deliverFailure(push.id, reason: "late", permanent: true) } == .retired)
            #expect(await Kit.storeError { try await storeA.deliverConflict(push.id, server: Kit.row("q", at: 300)) } == .retired)
            #expect(await Kit.storeError { try await storeA.create("pin", id: "p", fields: [:]) } == .retired)
            #expect(await storeA.isInFlight(push.id) == false)

            // Store A wrote nothing after it was retired; store B's journal is untouched.
            #expect(faults.callCount(.pwrite, on: .path(scratch.journal)) == writesAfterRetire)
            #expect(Kit.bytes(scratch.journal) == journalAfterRemoval)
            #expect(try await storeB.record("pin", id: "p") == nil)
            #expect(try await storeB.outboxOperations().map(\.operation.kind) == [.update, .delete])

            // And the removal survives a reopen.
            try await storeB.close()
            let storeC = try await Kit.open(scratch.journal)
            #expect(try await storeC.record("pin", id: "p") == nil)
            #expect(try await storeC.outboxOperations().last?.operation.kind == .delete)
            #expect(try await storeC.outboxOperations().last?.operation.baseUpdatedAt == 100)
            try await storeC.close()
        }
    }

    @Test("lifecycle: retirement: a journal write held when retire() is called completes before the journal is released; its caller and every queued call get .retired, and a later reply cannot undo a removal made through the reopened store")
    func retireDuringHeldWrite() async throws {
        try await Kit.withScratch { scratch in
            let held = SyncHoldingSystemCalls()
            let faults = FaultInjectingSystemCalls(wrapping: held)
            let storeA = try await Kit.open(scratch.journal, system: faults)
            try await storeA.applyPulledPage(kind: "pin", rows: [Kit.row("p", at: 100, ["name": .string("Tapas bar")])], cursor: nil)

            // A pulled page is being journaled, its fdatasync held.
            held.holdNextSync()
            let pull = Task {
                try await storeA.applyPulledPage(kind: "pin", rows: [Kit.row("p", at: 200, ["name": .string("Renamed")])],
                                                 cursor: PullCursor(updatedAt: 200, id: "p"))
            }
            await held.waitUntilHeld()
            let queuedEdit = Task { try await storeA.update("pin", id: "p", changes: ["visited": .bool(true)]) }

            let retiring = Task { await storeA.retire() }
            while await storeA.status != .retired { await Task.yield() }
            // While the held write is on the writer's queue, the journal is still locked.
            #expect(await Kit.storeError { _ = try await Kit.open(scratch.journal) } == .cannotOpen(path: scratch.journal, cause: .locked(path: scratch.journal)))

            held.release()
            await retiring.value
            #expect(await Kit.storeError { try await pull.value } == .retired)
            #expect(await Kit.storeError { _ = try await queuedEdit.value } == .retired)
            let writesAfterRetire = faults.callCount(.pwrite, on: .path(scratch.journal))

            // retire() has returned: the journal is free. The held write reached
            // the disk before the lock was released, so the new store sees it.
            let storeB = try await Kit.open(scratch.journal)
            // The edit queued behind the held write may have been written
            // behind it (pipelined group commit) and replays, or not: like
            // the held write, its caller was told .retired either way. Both
            // or neither of its traces are there: the queued update and its field.
            let replayed = try await storeB.record("pin", id: "p")?.fields
            let queued = try await storeB.outboxOperations().count
            #expect(queued <= 1)
            #expect(replayed == (queued == 1 ? ["name": .string("Renamed"), "visited": .bool(true)] : ["name": .string("Renamed")]))
            try await storeB.delete("pin", id: "p")
            let journalAfterRemoval = Kit.bytes(scratch.journal)

            // The late reply of an older request lands on the retired store.
            #expect(await Kit.storeError {
                try await storeA.applyPulledPage(kind: "pin", rows: [Kit.row("p", at: 300, ["name": .string("Late")])], cursor: nil)
            } == .retired)
            #expect(faults.callCount(.pwrite, on: .path(scratch.journal)) == writesAfterRetire)
            #expect(Kit.bytes(scratch.journal) == journalAfterRemoval)
            try await storeB.close()
            let storeC = try await Kit.open(scratch.journal)
            #expect(try await storeC.record("pin", id: "p") == nil)
            try await storeC.close()
        }
    }

    @Test("lifecycle: a retired store refuses reads and edits with .retired, and retire() and close() may be called again")
    func retiredStoreRefusesEverything() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "a", fields: [:])
            await store.retire()
            await store.retire()
            #expect(await Kit.storeError { _ = try await store.record("pin", id: "a") } == .retired)
            #expect(await Kit.storeError { _ = try await store.outboxOperations() } == .retired)
            #expect(await Kit.storeError { try await store.update("pin", id: "a", changes: ["x": .int(1)]) } == .retired)
            #expect(await Kit.storeError { _ = try await store.operationsReadyToSend(limit: 1) } == .retired)
            #expect(await Kit.storeError { try await store.checkpoint() } == .retired)
            try await store.close()
            #expect(await store.status == .retired)
            // The journal was released and kept everything written before retirement.
            let reopened = try await Kit.open(scratch.journal)
            #expect(try await reopened.record("pin", id: "a") != nil)
            try await reopened.close()
        }
    }
}

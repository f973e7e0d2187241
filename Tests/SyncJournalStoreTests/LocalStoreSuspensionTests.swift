import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import Testing

// Suspension: an iOS app holds no file lock while it is suspended, an app
// extension writes the journal meanwhile, and the app picks its edits up on
// resume. Operations in flight at the suspension are never acknowledged by a
// late reply; they go again with their own ids.

@Suite("LocalStore: suspend and resume")
struct LocalStoreSuspensionTests {
    typealias Kit = StoreRulesKit

    static func readOnly() -> LocalStore.Options {
        var options = Kit.options()
        options.readOnly = true
        return options
    }

    @Test("suspend: the edits queued before it are durable with their results, later ones fail fast, reads answer from memory, and the lock is free")
    func suspendFinishesQueuedWritesAndReleasesTheLock() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "first", fields: [:])
            // Edits racing the suspension: each either is journaled (and says
            // so) or fails as suspended; none is lost or half-done.
            let edits = (0..<40).map { index in
                Task { () -> Result<Void, StoreError> in
                    do throws(StoreError) {
                        _ = try await store.create("pin", id: "p\(index)", fields: ["n": .int(Int64(index))])
                        return .success(())
                    } catch { return .failure(error) }
                }
            }
            await store.suspend()
            var succeeded: Set<String> = ["first"]
            for (index, edit) in edits.enumerated() {
                switch await edit.value {
                case .success: succeeded.insert("p\(index)")
                case .failure(let error): #expect(error == .suspended(path: scratch.journal), "p\(index): \(error)")
                }
            }
            #expect(await store.status == .suspended)
            #expect(Set(try await store.records("pin").map(\.id)) == succeeded, "reads answer from memory")
            #expect(await Kit.storeError { _ = try await store.create("pin", id: "late", fields: [:]) } == .suspended(path: scratch.journal))
            #expect(await Kit.storeError { try await store.checkpoint() } == .suspended(path: scratch.journal))

            // The lock is free: another writer opens, and it finds every acknowledged edit.
            let other = try await Kit.open(scratch.journal)
            #expect(Set(try await other.records("pin").map(\.id)) == succeeded)
            try await other.close()
            try await store.close()
        }
    }

    @Test("resume: what another store appended meanwhile is in the state, observers and change streams hear of it, and the store writes on")
    func resumeReplaysAnotherWritersEdits() async throws {
        try await Kit.withScratch { scratch in
            let app = try await Kit.open(scratch.journal)
            try await app.create("pin", id: "cafe", fields: ["name": .string("Cafe")])
            var observed = app.observe(Query("pin")).makeAsyncIterator()
            #expect(await observed.next()?.map(\.id) == ["cafe"])
            let changes = await app.changes()
            await app.suspend()

            // The extension writes while the app sleeps.
            let appExtension = try await Kit.open(scratch.journal)
            try await appExtension.create("pin", id: "museum", fields: ["name": .string("Museum")])
            try await appExtension.update("pin", id: "cafe", changes: ["visited": .bool(true)])
            // While it holds the journal, resuming fails and the app stays suspended.
            let refused = await Kit.storeError { try await app.resume() }
            #expect(refused?.caseName == "cannotOpen.locked")
            #expect(await app.status == .suspended)
            #expect(try await app.records("pin").map(\.id) == ["cafe"])
            try await appExtension.close()

            try await app.resume()
            #expect(await app.status == .ready)
            #expect(try await app.records("pin").map(\.id) == ["cafe", "museum"])
            #expect(try await app.record("pin", id: "cafe")?.fields["visited"] == .bool(true))
            #expect(await observed.next()?.map(\.id) == ["cafe", "museum"], "the observer hears of the extension's edits")
            var heard: [StoreChange] = []
            for await change in changes {
                heard.append(change)
                if heard.count == 2 { break }
            }
            #expect(heard == [.edited(RecordKey(kind: "pin", id: "cafe")), .edited(RecordKey(kind: "pin", id: "museum"))])

            try await app.create("pin", id: "tapas", fields: [:])
            try await app.close()
            let reopened = try await Kit.open(scratch.journal)
            #expect(try await reopened.records("pin").map(\.id) == ["cafe", "museum", "tapas"])
            #expect(try await reopened.outboxOperations().count == 3, "the update merged into the unsent create")
            try await reopened.close()
        }
    }

    @Test("an operation in flight at the suspension: a late reply is not kept, it stays queued and sent, and goes again with its own id")
    func inFlightOperationsAreHandedBack() async throws {
        for lateReply in ["acknowledged", "withdrawn", "while suspended"] {
            try await Kit.withScratch { scratch in
                let store = try await Kit.open(scratch.journal)
                try await store.create("pin", id: "cafe", fields: ["name": .string("Cafe")])
                let batch = try await store.beginSending(limit: 10, excluding: [])
                let id = try #require(batch.operations.first?.id)
                #expect(await store.isInFlight(id))
                await store.suspend()
                #expect(await !store.isInFlight(id), "\(lateReply)")
                let reply: [(OperationID, LocalStore.DeliveryOutcome)] = [(id, .acknowledged(Kit.row("cafe", at: 10, ["name": .string("Cafe")])))]
                switch lateReply {
                case "acknowledged":
                    try await store.resume()
                    _ = try await store.endSending([id], outcomes: reply)
                case "withdrawn":
                    try await store.resume()
                    // The transport says it never left; another process may have sent it meanwhile.
                    try await store.withdrawSending([id], newlyMarked: [id])
                default:
                    #expect(await Kit.storeError { _ = try await store.endSending([id], outcomes: reply) } == .suspended(path: scratch.journal))
                    try await store.resume()
                }
                let queued = try #require(try await store.outboxOperations().first, "\(lateReply)")
                #expect(queued.id == id, "\(lateReply)")
                #expect(queued.sent, "\(lateReply): still marked sent")
                // A delete now cannot cancel the create locally: it may have reached the server.
                try await store.delete("pin", id: "cafe")
                #expect(try await store.outboxOperations().count == 2, "\(lateReply)")

                // It goes again, with the same id, and this reply is kept.
                let again = try await store.beginSending(limit: 10, excluding: [])
                #expect(again.operations.map(\.id) == [id], "\(lateReply)")
                _ = try await store.endSending([id], outcomes: reply)
                let left = try await store.outboxOperations().map(\.id)
                #expect(!left.contains(id) && left.count == 1, "\(lateReply): acknowledged now; the delete waits")
                try await store.close()
            }
        }
    }

    @Test("suspend and resume of a failed store: the journal is reopened and the store writes again")
    func resumeRecoversAFailedStore() async throws {
        try await Kit.withScratch { scratch in
            let faults = FaultInjectingSystemCalls(wrapping: PosixSystemCalls())
            let store = try await Kit.open(scratch.journal, system: faults)
            try await store.create("pin", id: "kept", fields: [:])
            let rule = faults.inject(.fail(errno: EIO), into: .fdatasync, when: .everyCall)
            #expect(await Kit.storeError { _ = try await store.create("pin", id: "lost", fields: [:]) } != nil)
            guard case .failed = await store.status else {
                Issue.record("status is \(await store.status)")
                return
            }
            await store.suspend()
            faults.remove(rule)
            try await store.resume()
            #expect(await store.status == .ready)
            try await store.create("pin", id: "after", fields: [:])
            // (The edit whose sync failed may or may not be in the file: its caller was told it failed.)
            let ids = try await store.records("pin").map(\.id)
            #expect(ids.contains("after") && ids.contains("kept"), "\(ids)")
            try await store.close()
        }
    }

    @Test("suspend and resume are idempotent, and do nothing to a closed store")
    func repeatedCalls() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.resume()
            #expect(await store.status == .ready)
            await store.suspend()
            await store.suspend()
            #expect(await store.status == .suspended)
            try await store.resume()
            try await store.resume()
            #expect(await store.status == .ready)
            try await store.close()
            await store.suspend()
            try await store.resume()
            #expect(await store.status == .closed)
        }
    }

    @Test("resume: a journal removed while suspended is not replaced by an empty one; the store stays suspended with its state")
    func vanishedJournalIsNotRecreated() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "cafe", fields: [:])
            await store.suspend()
            try FileManager.default.removeItem(atPath: scratch.journal)
            let error = await Kit.storeError { try await store.resume() }
            #expect(error?.caseName == "cannotOpen.io")
            #expect(await store.status == .suspended)
            #expect(try await store.records("pin").map(\.id) == ["cafe"])
            #expect(!FileManager.default.fileExists(atPath: scratch.journal))
            try await store.close()
        }
    }
}

import SyncJournalCore
import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import Testing

// Disk before screen: every edit is
// journaled durably before the view changes; a failed append throws and
// changes neither the view nor the outbox.

@Suite("LocalStore: disk before screen")
struct LocalStoreDiskBeforeScreenTests {
    typealias Kit = StoreRulesKit

    /// The edits tried under a fault: on a server record, and on a record
    /// created here and never sent (where the edit would also compact the queue).
    enum Edit: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case createNew, updateServerRecord, deleteServerRecord, updateLocalRecord, deleteLocalRecord
        var testDescription: String { rawValue }

        func run(on store: LocalStore) async throws {
            switch self {
            case .createNew: try await store.create("pin", id: "new", fields: ["name": .string("Tapas bar")])
            case .updateServerRecord: try await store.update("pin", id: "srv", changes: ["visited": .bool(true)])
            case .deleteServerRecord: try await store.delete("pin", id: "srv")
            case .updateLocalRecord: try await store.update("pin", id: "local", changes: ["rating": .int(5)])
            case .deleteLocalRecord: try await store.delete("pin", id: "local")
            }
        }
    }

    /// What the app and the engine can see, and what is on disk.
    struct Observed: Equatable {
        var records: [StoreRecord]
        var pending: [OutboxOperation]
        var state: StoreState
        var journal: [UInt8]?

        init(_ store: LocalStore) async throws {
            records = try await store.records("pin")
            pending = try await store.outboxOperations()
            state = try await store.currentState()
            journal = Kit.journalContent(store.path)
        }
    }

    /// A store with a server record `srv` (stamp 100) and a local, never sent record `local`.
    static func seededStore(_ path: String, system: any SystemCalls) async throws -> LocalStore {
        let store = try await Kit.open(path, system: system)
        try await store.applyPulledPage(kind: "pin", rows: [Kit.row("srv", at: 100, ["name": .string("Cafe")])],
                                        cursor: PullCursor(updatedAt: 100, id: "srv"))
        try await store.create("pin", id: "local", fields: ["name": .string("Museum")])
        return store
    }

    @Test("disk before screen: an edit whose journal write fails with ENOSPC or EIO throws StoreError.journal and changes neither the view nor the outbox",
          arguments: [Int32(28), Int32(5)], Edit.allCases)
    func failedWriteChangesNothing(errno: Int32, edit: Edit) async throws {
        try await Kit.withScratch { scratch in
            let faults = FaultInjectingSystemCalls()
            let store = try await Self.seededStore(scratch.journal, system: faults)
            let before = try await Observed(store)

            let rule = faults.inject(.fail(errno: errno), into: .pwrite, on: .path(scratch.journal))
            let error = await Kit.storeError { try await edit.run(on: store) }
            #expect(faults.timesFired(rule) == 1)
            #expect(error?.caseName == "journal.io", "got \(String(describing: error))")
            if case .journal(.io(let cause))? = error { #expect(cause.errno == errno) }

            // Neither record()/records() nor pendingOperations() changed, and
            // the file holds exactly what it held before.
            #expect(try await Observed(store) == before)
            #expect(try await store.record("pin", id: "new") == nil)
            #expect(await store.status == .ready)

            // A failed write is not final: the same edit succeeds afterwards and survives a reopen.
            try await edit.run(on: store)
            let after = try await store.currentState()
            #expect(after != before.state)
            try await store.close()
            let reopened = try await Kit.open(scratch.journal)
            #expect(try await reopened.currentState() == after)
            try await reopened.close()
        }
    }

    @Test("disk before screen: a torn write (half the bytes, then EIO) is cut back and changes nothing")
    func tornWriteChangesNothing() async throws {
        try await Kit.withScratch { scratch in
            let faults = FaultInjectingSystemCalls()
            let store = try await Self.seededStore(scratch.journal, system: faults)
            let before = try await Observed(store)
            faults.inject(.tornWrite(bytes: 20, errno: Errno.ioError.rawValue), into: .pwrite, on: .path(scratch.journal))
            let error = await Kit.storeError { try await store.delete("pin", id: "srv") }
            #expect(error?.caseName == "journal.io")
            #expect(try await Observed(store) == before)
            try await store.close()
        }
    }

    @Test("disk before screen: after a failed fdatasync the edit throws, nothing changes, the store is failed and refuses edits until it is reopened from disk",
          arguments: [Edit.createNew, .updateServerRecord, .deleteServerRecord, .deleteLocalRecord])
    func failedSyncFailsTheStoreUntilReopened(edit: Edit) async throws {
        try await Kit.withScratch { scratch in
            let faults = FaultInjectingSystemCalls()
            let store = try await Self.seededStore(scratch.journal, system: faults)
            let before = try await Observed(store)
            let visibleBefore = try await store.records("pin")

            let rule = faults.inject(.ioError, into: .fdatasync, on: .path(scratch.journal))
            let error = await Kit.storeError { try await edit.run(on: store) }
            #expect(faults.timesFired(rule) == 1)
            #expect(error?.caseName == "journal.writerFailed", "got \(String(describing: error))")

            // The screen did not change (reads still work in the failed state).
            #expect(try await store.records("pin") == visibleBefore)
            #expect(try await store.outboxOperations() == before.pending)
            #expect(try await store.currentState() == before.state)
            guard case .failed = await store.status else {
                Issue.record("status is \(await store.status), expected .failed")
                return
            }

            // Every further write is refused, without touching the disk again.
            let syncsBefore = faults.callCount(.fdatasync, on: .path(scratch.journal))
            let pwritesBefore = faults.callCount(.pwrite, on: .path(scratch.journal))
            #expect(await Kit.storeError { try await store.create("pin", id: "later", fields: [:]) }?.caseName == "journal.writerFailed")
            #expect(await Kit.storeError { try await store.update("pin", id: "srv", changes: ["x": .int(1)]) }?.caseName == "journal.writerFailed")
            #expect(await Kit.storeError { try await store.delete("pin", id: "local") }?.caseName == "journal.writerFailed")
            #expect(await Kit.storeError {
                try await store.applyPulledPage(kind: "pin", rows: [Kit.row("srv", at: 200)], cursor: nil)
            }?.caseName == "journal.writerFailed")
            #expect(faults.callCount(.fdatasync, on: .path(scratch.journal)) == syncsBefore)
            #expect(faults.callCount(.pwrite, on: .path(scratch.journal)) == pwritesBefore)
            #expect(try await store.currentState() == before.state)

            // Reopening recovers from what is really on disk, and edits work again.
            try await store.close()
            let reopened = try await Kit.open(scratch.journal)
            #expect(await reopened.status == .ready)
            let onDisk = try Replayer.replay(path: scratch.journal).state
            #expect(try await reopened.currentState() == onDisk)
            // Everything acknowledged as saved before the failure is still there.
            #expect(try await reopened.record("pin", id: "local") != nil || edit == .deleteLocalRecord)
            try await reopened.create("pin", id: "after-reopen", fields: ["name": .string("Bar")])
            let live = try await reopened.currentState()
            try await reopened.close()
            let third = try await Kit.open(scratch.journal)
            #expect(try await third.currentState() == live)
            #expect(try await third.record("pin", id: "after-reopen") != nil)
            try await third.close()
        }
    }

    @Test("disk before screen: a torn write whose cut-back also fails fails the store; nothing changes, and reopening cuts the torn bytes and recovers the state from before")
    func tornWriteWithFailedTruncateFailsTheStore() async throws {
        try await Kit.withScratch { scratch in
            let faults = FaultInjectingSystemCalls()
            let store = try await Self.seededStore(scratch.journal, system: faults)
            let before = try await Observed(store)
            faults.inject(.tornWrite(bytes: 20, errno: Errno.noSpace.rawValue), into: .pwrite, on: .path(scratch.journal))
            faults.inject(.ioError, into: .ftruncate, on: .path(scratch.journal))
            let error = await Kit.storeError { try await store.create("pin", id: "new", fields: ["name": .string("Bar")]) }
            #expect(error?.caseName == "journal.writerFailed", "got \(String(describing: error))")
            #expect(try await store.records("pin") == before.records)
            #expect(try await store.outboxOperations() == before.pending)
            guard case .failed = await store.status else {
                Issue.record("status is \(await store.status), expected .failed")
                return
            }
            #expect(await Kit.storeError { try await store.delete("pin", id: "srv") }?.caseName == "journal.writerFailed")
            try await store.close()

            let reopened = try await Kit.open(scratch.journal)
            // The writer overwrote the 20 torn bytes with zeros when it could
            // not cut them: the reopened journal ends cleanly before them.
            #expect(reopened.recovery?.statusFound == .clean)
            #expect(reopened.recovery?.bytesCut == 0)
            #expect(try await reopened.currentState() == before.state)
            try await reopened.create("pin", id: "new", fields: ["name": .string("Bar")])
            try await reopened.close()
        }
    }

    @Test("disk before screen: of many concurrent edits, exactly those that returned are visible, and the view equals what replay of the journal gives")
    func concurrentEditsUnderWriteFaults() async throws {
        try await Kit.withScratch { scratch in
            let faults = FaultInjectingSystemCalls()
            let store = try await Self.seededStore(scratch.journal, system: faults)
            // The odd journal writes from now on fail (how the edits group
            // into writes varies; the first write always fails).
            for n in [1, 3, 5, 7, 9] {
                faults.inject(n % 3 == 0 ? .ioError : .noSpace, into: .pwrite, on: .path(scratch.journal), when: .nthCall(n))
            }
            let ids = (0..<40).map { "c\($0)" }
            let outcomes = await withTaskGroup(of: (String, Bool).self) { group in
                for id in ids {
                    group.addTask {
                        do {
                            try await store.create("pin", id: id, fields: ["n": .string(id)])
                            return (id, true)
                        } catch { return (id, false) }
                    }
                }
                var outcomes: [String: Bool] = [:]
                for await (id, saved) in group { outcomes[id] = saved }
                return outcomes
            }
            #expect(outcomes.values.contains(false), "the first write failed")
            #expect(outcomes.count == ids.count)
            let saved = Set(outcomes.filter(\.value).keys)
            let visible = Set(try await store.records("pin").map(\.id)).subtracting(["srv", "local"])
            #expect(visible == saved)
            #expect(Set(try await store.outboxOperations().map(\.operation.recordID)).subtracting(["local"]) == saved)
            #expect(try Replayer.replay(path: scratch.journal).state == (try await store.currentState()))
            try await store.close()
        }
    }
}

import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import Testing

// Input validation limits an operation to half a journal record
// (JournalFormat.maximumPayloadLength / 2), so that it always fits. A
// compacted edit journals the edit AND the merged operation in one record,
// which two valid edits can push past the record limit.

@Suite("LocalStore: record size limits")
struct LocalStoreRecordSizeTests {
    typealias Kit = StoreRulesKit

    /// A field value just under the per-operation limit.
    static let large = FieldValue.bytes([UInt8](repeating: 0xAB, count: 7 << 20))

    @Test("input validation: an edit whose fields exceed what a record may hold is refused with StoreError.invalidFields and nothing is journaled")
    func oversizedFieldsAreInvalidFields() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let records = try Kit.recordCount(scratch.journal)
            let tooLarge = FieldValue.bytes([UInt8](repeating: 1, count: (JournalFormat.maximumPayloadLength / 2) + 1))
            #expect(await Kit.storeError { try await store.create("pin", id: "a", fields: ["blob": tooLarge]) }?.caseName == "invalidFields")
            #expect(try Kit.recordCount(scratch.journal) == records)
            try await store.close()
        }
    }

    @Test("input validation: two valid edits that the compactor would merge past the record limit are still accepted, or refused with a validation error, never a journal error")
    func mergeOfTwoLargeValidEditsIsNotAJournalError() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "a", fields: ["photo": Self.large])
            let before = try await store.currentState()
            let error = await Kit.storeError { try await store.update("pin", id: "a", changes: ["thumbnail": Self.large]) }
            // Disk before screen holds either way.
            if error != nil { #expect(try await store.currentState() == before) }
            #expect(await store.status == .ready)
            #expect(error?.caseName != "journal.recordTooLarge", "got \(String(describing: error))")
            try await store.close()
        }
    }

    @Test("disk before screen: an edit that fails to journal on its own does not fail unrelated edits written in the same group commit")
    func oversizedCompactionDoesNotFailItsBatch() async throws {
        try await Kit.withScratch { scratch in
            let held = SyncHoldingSystemCalls()
            let clock = StoreRulesSignallingClock()
            let options = LocalStore.Options(system: held, clock: clock, upkeep: .off)
            let store = try await LocalStore.open(path: scratch.journal, options: options)
            try await store.create("pin", id: "big", fields: ["photo": Self.large])       // clock reading 1

            // Hold an unrelated write so that the next two calls share one journal write.
            held.holdNextSync()
            let first = Task { try await store.create("pin", id: "w", fields: [:]) }       // reading 2
            await held.waitUntilHeld()
            let bigUpdate = Task { try await store.update("pin", id: "big", changes: ["thumbnail": Self.large]) }
            let smallCreate = Task { try await store.create("pin", id: "small", fields: ["name": .string("Bar")]) }
            await clock.waitUntilRead(times: 4)   // both calls are queued behind the held write
            held.release()
            _ = try await first.value

            let bigError = await Kit.storeError { _ = try await bigUpdate.value }
            let smallError = await Kit.storeError { _ = try await smallCreate.value }
            // Disk before screen: what the screen shows is what the journal holds.
            let live = try await store.currentState()
            #expect(try Replayer.replay(path: scratch.journal).state == live)
            #expect((try await store.record("pin", id: "small") != nil) == (smallError == nil))
            #expect(smallError == nil, "the unrelated create failed with \(String(describing: smallError)) because of the update of big (\(String(describing: bigError)))")
            try await store.close()
        }
    }
}

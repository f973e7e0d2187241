import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import Testing

// Read-only opening: a widget, an extension or a backup viewer reads a
// journal without ever writing it, even one another store holds for writing.

@Suite("LocalStore: read-only opening")
struct LocalStoreReadOnlyTests {
    typealias Kit = StoreRulesKit

    static func readOnly(system: any SystemCalls = PosixSystemCalls()) -> LocalStore.Options {
        var options = Kit.options(system: system)
        options.readOnly = true
        return options
    }

    /// The names in `directory`, sorted.
    static func listing(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    @Test("read-only: opens a journal a store holds for writing, reads and queries it, and the writer keeps writing")
    func opensWhileAWriterHoldsIt() async throws {
        try await Kit.withScratch { scratch in
            let writer = try await Kit.open(scratch.journal)
            try await writer.create("pin", id: "cafe", fields: ["name": .string("Cafe")])
            try await writer.create("pin", id: "museum", fields: ["name": .string("Museum")])
            // A second writer is refused: the lock is held.
            #expect(await Kit.storeError { _ = try await Kit.open(scratch.journal) }?.caseName == "cannotOpen.locked")

            let reader = try await LocalStore.open(path: scratch.journal, options: Self.readOnly())
            #expect(await reader.status == .ready)
            #expect(await reader.isReadOnly)
            #expect(await reader.unreadTail == nil)
            #expect(try await reader.records("pin").map(\.id) == ["cafe", "museum"])
            #expect(try await reader.fetch(Query("pin").filter(Field("name") == "Cafe")).map(\.id) == ["cafe"])
            #expect(try await reader.outboxOperations().count == 2)
            #expect(try await reader.currentState() == writer.currentState())

            // The reader took no lock: the writer writes on, and a suspend and
            // resume of the reader reads what it wrote.
            try await writer.update("pin", id: "cafe", changes: ["visited": .bool(true)])
            await reader.suspend()
            try await reader.resume()
            #expect(try await reader.record("pin", id: "cafe")?.fields["visited"] == .bool(true))
            try await reader.close()
            try await writer.close()
        }
    }

    @Test("read-only: every edit, checkpoint and hand-over fails with a read-only error naming the path, and the files stay byte for byte")
    func writesNothing() async throws {
        try await Kit.withScratch { scratch in
            let writer = try await Kit.open(scratch.journal)
            try await writer.create("pin", id: "cafe", fields: ["name": .string("Cafe")])
            try await writer.close()
            let directory = (scratch.journal as NSString).deletingLastPathComponent
            let before = try #require(Kit.bytes(scratch.journal))
            let namesBefore = Self.listing(directory)

            let reader = try await LocalStore.open(path: scratch.journal, options: Self.readOnly())
            let refusals: [(String, () async throws -> Void)] = [
                ("create", { _ = try await reader.create("pin", id: "new", fields: [:]) }),
                ("update", { try await reader.update("pin", id: "cafe", changes: ["x": .int(1)]) }),
                ("delete", { try await reader.delete("pin", id: "cafe") }),
                ("checkpoint", { try await reader.checkpoint() }),
                ("transaction", { _ = try await reader.write { transaction in _ = try transaction.delete("pin", id: "cafe") } }),
                ("hand-over", { _ = try await reader.beginSending(limit: 10, excluding: []) }),
                ("pull", { try await reader.applyPulledPage(kind: "pin", rows: [Kit.row("b", at: 5)], cursor: nil) }),
            ]
            for (name, call) in refusals {
                let error = await Kit.storeError(call)
                #expect(error == .readOnly(path: scratch.journal), "\(name)")
                #expect(error?.description.contains("read-only") == true, "\(name): \(String(describing: error))")
            }
            // Reads and observation work.
            var results = reader.observe(Query("pin")).makeAsyncIterator()
            #expect(await results.next()?.map(\.id) == ["cafe"])
            #expect(try await reader.record("pin", id: "cafe") != nil)
            try await reader.close()

            #expect(Kit.bytes(scratch.journal) == before)
            #expect(Self.listing(directory) == namesBefore, "no lock file, side file or checkpoint appeared")
        }
    }

    @Test("read-only: a missing journal is an error that says so, and nothing is created")
    func missingJournal() async throws {
        try await Kit.withScratch { scratch in
            let directory = (scratch.journal as NSString).deletingLastPathComponent
            let namesBefore = Self.listing(directory)
            let error = await Kit.storeError { _ = try await LocalStore.open(path: scratch.journal, options: Self.readOnly()) }
            #expect(error?.caseName == "cannotOpen.io")
            #expect(error?.description == "cannot open the journal at \(scratch.journal): there is no journal file, and a read-only or resuming store never creates one (ENOENT)")
            #expect(Self.listing(directory) == namesBefore)
        }
    }

    @Test("read-only: a torn tail is read up to the damage and reported, never cut; a writer cuts it later")
    func tornTailIsReadNotCut() async throws {
        try await Kit.withScratch { scratch in
            try Kit.copySample("torn-tail.journal", to: scratch.journal)
            let directory = (scratch.journal as NSString).deletingLastPathComponent
            let before = try #require(Kit.bytes(scratch.journal))
            let namesBefore = Self.listing(directory)

            let reader = try await LocalStore.open(path: scratch.journal, options: Self.readOnly())
            #expect(await reader.status == .ready)
            let tail = try #require(await reader.unreadTail)
            #expect(tail.offset == 814)
            #expect(tail.bytes == 40)
            #expect(try await reader.record("pin", id: "p-cafe")?.fields["name"] == .string("Café Kranz"))
            #expect(try await reader.record("note", id: "n-1") != nil)
            let readState = try await reader.currentState()
            try await reader.close()
            #expect(Kit.bytes(scratch.journal) == before, "the tail is still there")
            #expect(Self.listing(directory) == namesBefore, "no side file")

            // A writer opening it later cuts the tail and sees the same state.
            let writer = try await Kit.open(scratch.journal)
            #expect(writer.recovery?.bytesCut == 40)
            #expect(try await writer.currentState() == readState)
            #expect(await writer.unreadTail == nil)
            try await writer.close()
        }
    }

    @Test("read-only: a corrupt journal opens unreadable and stays untouched")
    func corruptJournal() async throws {
        try await Kit.withScratch { scratch in
            try Kit.copySample("corrupt-middle.journal", to: scratch.journal)
            let before = try #require(Kit.bytes(scratch.journal))
            let reader = try await LocalStore.open(path: scratch.journal, options: Self.readOnly())
            guard case .unreadable(.corrupt) = await reader.status else {
                Issue.record("status is \(await reader.status)")
                return
            }
            #expect(await Kit.storeError { _ = try await reader.records("pin") }?.caseName == "unreadable")
            try await reader.close()
            #expect(Kit.bytes(scratch.journal) == before)
        }
    }

    @Test("opening for writing where files cannot be created says the directory is read-only and points at read-only opening")
    func readOnlyDirectoryMessage() async throws {
        try await Kit.withScratch { scratch in
            let writer = try await Kit.open(scratch.journal)
            try await writer.close()
            let directory = (scratch.journal as NSString).deletingLastPathComponent
            // As root, permissions do not stop a write: the system call is made to fail as a read-only directory would.
            for (code, words) in [(EROFS, "is on a read-only file system"), (EACCES, "is read-only for this process")] {
                let faults = FaultInjectingSystemCalls(wrapping: PosixSystemCalls())
                faults.inject(.fail(errno: code), into: .open, on: .pathSuffix(".lock"), when: .everyCall)
                let error = await Kit.storeError { _ = try await Kit.open(scratch.journal, system: faults) }
                let text = error?.description ?? ""
                #expect(text.contains("\(directory) \(words)"), "\(text)")
                #expect(text.contains("readOnly"), "\(text)")
                #expect(!text.contains("does not exist") && !text.contains("no permission"), "\(text)")
                // And the read-only store opens through the same calls.
                let reader = try await LocalStore.open(path: scratch.journal, options: Self.readOnly(system: faults))
                #expect(await reader.status == .ready)
                try await reader.close()
            }
        }
    }
}

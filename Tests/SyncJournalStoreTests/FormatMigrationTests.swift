import SyncJournalProtocol
import Foundation
import SyncJournalCore
import SyncJournalStore
import Testing

/// A store on a journal written by format 1.x: it keeps the file readable by
/// 1.x readers until its first checkpoint, which writes the new file in
/// format 2 with the same state.
@Suite("LocalStore: a 1.x journal moves to format 2")
struct FormatMigrationTests {
    typealias Kit = StoreRulesKit

    static func golden(_ name: String) -> String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("journals/golden/\(name)").path
    }

    @Test("a store opened on a 1.x journal moves it to format 2 with the same state before it appends, and a checkpoint keeps that state")
    func openingMovesTheJournalToFormat2() async throws {
        try await Kit.withScratch { scratch in
            try FileManager.default.copyItem(atPath: Self.golden("v1.1-conflicts.journal"), toPath: scratch.journal)
            let replayed = try Replayer.replay(path: scratch.journal).state

            let store = try await Kit.open(scratch.journal)
            #expect(try await store.currentState() == replayed)
            var report = try JournalReader(path: scratch.journal).scan()
            #expect(report.header?.majorVersion == 2)
            #expect(report.status == .clean)
            #expect(try Replayer.replay(path: scratch.journal).state == replayed)
            try await store.create("pin", id: "p-after-1x", fields: ["name": .string("added by format 2 code")])
            let edited = try await store.currentState()

            try await store.checkpoint()
            report = try JournalReader(path: scratch.journal).scan()
            #expect(report.header?.majorVersion == 2)
            #expect(report.status == .clean)
            #expect(try await store.currentState() == edited)
            try await store.close()

            let reopened = try await Kit.open(scratch.journal)
            #expect(try await reopened.currentState() == edited)
            try await reopened.close()
            #expect(try Replayer.replay(path: scratch.journal).state == edited)
        }
    }
}

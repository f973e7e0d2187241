import Foundation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// A device's model version travels with its pushes, and another device
/// pulls the highest version that wrote each record.
@Suite("model versions between devices")
struct ModelVersionSyncTests {
    static func expectOK(_ outcome: SyncOutcome, sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard case .ok = outcome else {
            Issue.record("sync: \(outcome)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
    }

    @Test("the engine pushes each operation's model version; the server keeps the highest and another device's records show it after a pull")
    func versionTravels() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let newer = try await FailureRig.open(dir.file("newer.journal"), server: server, settings: FailureRig.Settings(), start: false)
        let older = try await FailureRig.open(dir.file("older.journal"), server: server, settings: FailureRig.Settings(), start: false)
        try await older.store.create("pin", id: "p1", fields: ["name": .string("Cafe")], modelVersion: 1)
        try Self.expectOK(await older.engine.sync())
        #expect(await server.row(kind: "pin", id: "p1")?.modelVersion == 1)
        try Self.expectOK(await newer.engine.sync())
        try await newer.store.update("pin", id: "p1", changes: ["name": .string("Bar")], modelVersion: 4)
        #expect(try await newer.store.record("pin", id: "p1")?.modelVersion == 4, "the local edit shows at once")
        try Self.expectOK(await newer.engine.sync())
        #expect(await server.row(kind: "pin", id: "p1")?.modelVersion == 4)
        try Self.expectOK(await older.engine.sync())
        let seen = try #require(try await older.store.record("pin", id: "p1"))
        #expect(seen.modelVersion == 4, "the older device can tell a newer version wrote it")
        #expect(seen.fields["name"] == .string("Bar"))
        for rig in [newer, older] {
            await rig.engine.stop()
            try await rig.store.close()
        }
    }
}

import Foundation
import SyncJournal
import SyncJournalTesting
import Testing

/// Two devices on different versions of one model, editing the same records
/// offline and syncing through one server in either order.
@Suite("Devices on two model versions")
struct MixedVersionSyncTests {
    /// The first release's note.
    struct NoteV1: SyncRecord, Equatable {
        static let kind = "note"
        var id: String
        var text: String
        var created: Int64
    }

    /// The second release: `text` is called `body`, and a note can be pinned.
    struct NoteV2: SyncRecord, Equatable {
        static let kind = "note"
        static let schemaVersion = 2
        static let migrations = [RecordMigration(to: 2, [.renameField("text", to: "body"), .addField("pinned", default: false)])]
        var id: String
        var body: String
        var created: Int64
        var pinned: Bool
    }

    struct Device {
        let store: LocalStore
        let engine: SyncEngine

        static func open(_ path: String, server: ReferenceServer) async throws -> Device {
            var options = LocalStore.Options()
            options.conflictPolicies["note"] = .mergeFields
            let store = try await LocalStore.open(path: path, options: options)
            return Device(store: store, engine: SyncEngine(store: store, transport: server.transport(user: "u1"),
                                                           options: .init(kinds: ["note", "book"])))
        }

        func sync(sourceLocation: SourceLocation = #_sourceLocation) async {
            let outcome = await engine.sync()
            guard case .ok = outcome else {
                Issue.record("sync: \(outcome)", sourceLocation: sourceLocation)
                return
            }
        }

        func close() async throws {
            await engine.stop()
            try await store.close()
        }
    }

    @Test("offline edits on versions 1 and 2 converge in either order: the older device's edit stands, the newer field survives it, and each lists every note",
          arguments: [true, false])
    func offlineEditsConverge(olderSyncsFirst: Bool) async throws {
        let directory = try TemporaryDirectory(prefix: "mixed-versions"); defer { directory.remove() }
        let server = ReferenceServer()
        let older = try await Device.open(directory.file("older.journal"), server: server)
        let newer = try await Device.open(directory.file("newer.journal"), server: server)
        try await older.store.insert(NoteV1(id: "n1", text: "milk", created: 1))
        await older.sync()
        await newer.sync()

        // Reading in the newer shape sends nothing: no migration is ever an edit.
        #expect(try await newer.store.fetchAll(NoteV2.self).values == [NoteV2(id: "n1", body: "milk", created: 1, pinned: false)])
        #expect(try await newer.store.pendingOperations(kind: "note", id: "n1").isEmpty)

        // Both offline: the older device changes the text and adds a note; the newer pins and adds one.
        try await older.store.update(NoteV1.self, id: "n1") { $0.text = "milk and eggs" }
        try await older.store.insert(NoteV1(id: "n2", text: "call Ana", created: 2))
        try await newer.store.update(NoteV2.self, id: "n1") { $0.pinned = true }
        try await newer.store.insert(NoteV2(id: "n3", body: "tapas at Sol", created: 3, pinned: true))

        let (first, second) = olderSyncsFirst ? (older, newer) : (newer, older)
        await first.sync()
        await second.sync()
        await first.sync()

        let seenByNewer = try await newer.store.fetchAll(NoteV2.self)
        #expect(seenByNewer.undecodable.isEmpty)
        #expect(seenByNewer.values == [NoteV2(id: "n1", body: "milk and eggs", created: 1, pinned: true),
                                       NoteV2(id: "n2", body: "call Ana", created: 2, pinned: false),
                                       NoteV2(id: "n3", body: "tapas at Sol", created: 3, pinned: true)])
        let seenByOlder = try await older.store.fetchAll(NoteV1.self)
        #expect(seenByOlder.undecodable.isEmpty)
        #expect(seenByOlder.values == [NoteV1(id: "n1", text: "milk and eggs", created: 1), NoteV1(id: "n2", text: "call Ana", created: 2),
                                       NoteV1(id: "n3", text: "tapas at Sol", created: 3)])
        #expect(Set(seenByOlder.writtenByNewerVersion) == ["n1", "n3"])
        // The server holds every field each device wrote, under the names both versions share.
        let row = try #require(await server.row(kind: "note", id: "n1"))
        #expect(row.fields["text"] == .string("milk and eggs"))
        #expect(row.fields["pinned"] == .bool(true))
        #expect(row.fields["body"] == nil)
        #expect(row.modelVersion == 2)
        try await older.close()
        try await newer.close()
    }

    @Test("every kind of step reads a record another device's version 1 pushed: renamed twice, converted, defaulted, dropped, custom-filled, and the server keeps it as stored")
    func everyStepThroughTheServer() async throws {
        typealias BookV1 = ModelEvolutionTests.BookV1
        typealias BookV3 = ModelEvolutionTests.BookV3
        let directory = try TemporaryDirectory(prefix: "mixed-versions"); defer { directory.remove() }
        let server = ReferenceServer()
        let older = try await Device.open(directory.file("older.journal"), server: server)
        let newer = try await Device.open(directory.file("newer.journal"), server: server)
        try await older.store.insert(ModelEvolutionTests.dune)
        await older.sync()
        await newer.sync()
        #expect(try await newer.store.fetch(BookV3.self, id: "b1")
            == BookV3(id: "b1", title: "Dune", by: "Herbert", year: 1965, rating: 0, sortTitle: "dune"))
        // The newer device's edit of a twice-renamed property reaches the older one under its own name.
        try await newer.store.update(BookV3.self, id: "b1") { $0.by = "Frank Herbert"; $0.rating = 5 }
        await newer.sync()
        await older.sync()
        #expect(try await older.store.fetch(BookV1.self, id: "b1")
            == BookV1(id: "b1", title: "Dune", author: "Frank Herbert", year: "1965", shelf: "sci-fi"))
        let row = try #require(await server.row(kind: "book", id: "b1"))
        #expect(row.fields == ["title": "Dune", "author": "Frank Herbert", "year": "1965", "shelf": "sci-fi", "rating": .int(5)])
        #expect(row.modelVersion == 3)
        try await older.close()
        try await newer.close()
    }
}

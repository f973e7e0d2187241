import Foundation
import SyncJournal
import SyncJournalTesting
import Testing

/// Versioned record types in one store: each kind of migration step, records stored by
/// an older version read in the current shape, stable stored names, and key-path queries.
@Suite("Model evolution in the store")
struct ModelEvolutionTests {
    /// Version 1 of a book, as the first release stored it.
    struct BookV1: SyncRecord, Equatable {
        static let kind = "book"
        var id: String
        var title: String
        var author: String
        var year: String
        var shelf: String
    }

    /// Version 2: `author` renamed `writer`, `year` an integer, `rating` added, `shelf` dropped.
    struct BookV2: SyncRecord, Equatable {
        static let kind = "book"
        static let schemaVersion = 2
        static let migrations = [
            RecordMigration(to: 2, [
                .renameField("author", to: "writer"),
                .convertField("year", from: String.self, to: Int.self) { Int($0) ?? 0 },
                .addField("rating", default: 0),
                .dropField("shelf"),
            ]),
        ]
        var id: String
        var title: String
        var writer: String
        var year: Int
        var rating: Int
    }

    /// Version 3: `writer` renamed again, and a custom step filling `sortTitle` for older records.
    struct BookV3: SyncRecord, Equatable {
        static let kind = "book"
        static let schemaVersion = 3
        static let migrations = BookV2.migrations + [
            RecordMigration(to: 3, [
                .renameField("writer", to: "by"),
                .custom { fields in
                    if fields["sortTitle"] == nil, case .string(let title)? = fields["title"] {
                        fields["sortTitle"] = .string(title.lowercased())
                    }
                },
            ]),
        ]
        var id: String
        var title: String
        var by: String
        var year: Int
        var rating: Int
        var sortTitle: String
    }

    static func open(_ directory: TemporaryDirectory) async throws -> LocalStore {
        try await LocalStore.open(path: directory.file("books.journal"))
    }

    static let dune = BookV1(id: "b1", title: "Dune", author: "Herbert", year: "1965", shelf: "sci-fi")

    @Test("a record stored by version 1 reads in version 2's shape: renamed, converted, defaulted, the dropped field left out")
    func olderRecordReadsInTheCurrentShape() async throws {
        let directory = try TemporaryDirectory(prefix: "model-evolution"); defer { directory.remove() }
        let store = try await Self.open(directory)
        try await store.insert(Self.dune)
        let book = try #require(try await store.fetch(BookV2.self, id: "b1"))
        #expect(book == BookV2(id: "b1", title: "Dune", writer: "Herbert", year: 1965, rating: 0))
        // Two renames in a row follow the same stored field; the custom step fills what is missing.
        let v3 = try #require(try await store.fetch(BookV3.self, id: "b1"))
        #expect(v3 == BookV3(id: "b1", title: "Dune", by: "Herbert", year: 1965, rating: 0, sortTitle: "dune"))
        try await store.close()
    }

    @Test("reading records in a newer shape queues nothing: a migration is never an edit")
    func readingQueuesNothing() async throws {
        let directory = try TemporaryDirectory(prefix: "model-evolution"); defer { directory.remove() }
        let store = try await Self.open(directory)
        let create = try await store.insert(Self.dune)
        let before = try await store.pendingOperations(kind: "book", id: "b1").map(\.operation)
        _ = try await store.fetchAll(BookV2.self)
        _ = try await store.fetch(BookV3.self, id: "b1")
        let after = try await store.pendingOperations(kind: "book", id: "b1").map(\.operation)
        #expect(after == before)
        #expect(after.map(\.id) == [create.operation])
        // The stored record is still exactly what version 1 wrote.
        let stored = try #require(try await store.record("book", id: "b1"))
        #expect(stored.fields == ["title": .string("Dune"), "author": .string("Herbert"), "year": .string("1965"), "shelf": .string("sci-fi")])
        try await store.close()
    }

    @Test("an edit through a renamed property writes the stored field every version reads, and leaves the dropped field alone")
    func renamedPropertyWritesTheStoredField() async throws {
        let directory = try TemporaryDirectory(prefix: "model-evolution"); defer { directory.remove() }
        let store = try await Self.open(directory)
        try await store.insert(Self.dune)
        try await store.update(BookV2.self, id: "b1") { $0.writer = "Frank Herbert" }
        let queued = try #require(try await store.pendingOperations(kind: "book", id: "b1").last?.operation)
        #expect(queued.fields["author"] == .string("Frank Herbert") && queued.fields["writer"] == nil)
        #expect(queued.fields["shelf"] == .string("sci-fi"), "the field version 2 dropped is not cleared")
        // Version 1 reads the change under its own name, and keeps the field version 2 dropped.
        #expect(try await store.fetch(BookV1.self, id: "b1")?.author == "Frank Herbert")
        #expect(try await store.fetch(BookV1.self, id: "b1")?.shelf == "sci-fi")
        // A new version-2 record is stored under the stored names too.
        try await store.insert(BookV2(id: "b2", title: "Emma", writer: "Austen", year: 1815, rating: 4))
        let stored = try #require(try await store.record("book", id: "b2"))
        #expect(stored.fields == ["title": .string("Emma"), "author": .string("Austen"), "year": .int(1815), "rating": .int(4)])
        try await store.close()
    }

    @Test("a converted field already in the new type is left alone, whoever wrote it")
    func conversionLeavesNewValuesAlone() async throws {
        let directory = try TemporaryDirectory(prefix: "model-evolution"); defer { directory.remove() }
        let store = try await Self.open(directory)
        try await store.create("book", id: "b3", fields: ["title": "Ulysses", "author": "Joyce", "year": .int(1922)])
        try await store.create("book", id: "b4", fields: ["title": "Odyssey", "author": "Homer", "year": "unknown"])
        #expect(try await store.fetch(BookV2.self, id: "b3")?.year == 1922)
        #expect(try await store.fetch(BookV2.self, id: "b4")?.year == 0)
        try await store.close()
    }

    @Test("a version-1 journal with queued edits opened by version 2 reads every record, and its queued edits stay as version 1 wrote them")
    func versionOneJournalOpenedByVersionTwo() async throws {
        let directory = try TemporaryDirectory(prefix: "model-evolution"); defer { directory.remove() }
        do {
            let store = try await Self.open(directory)
            try await store.insert(Self.dune)
            try await store.insert(BookV1(id: "b5", title: "Kindred", author: "Butler", year: "1979", shelf: "novels"))
            try await store.update(BookV1.self, id: "b5") { $0.author = "Octavia Butler" }
            try await store.close()
        }
        let store = try await Self.open(directory)
        let books = try await store.fetchAll(BookV2.self)
        #expect(books.undecodable.isEmpty)
        #expect(books.values.map(\.writer) == ["Herbert", "Octavia Butler"])
        let queued = try await store.pendingOperations(kind: "book", id: "b5").map(\.operation.fields)
        #expect(queued.allSatisfy { $0["writer"] == nil }, "a queued edit is sent as it was made")
        #expect(queued.contains { $0["author"] == .string("Octavia Butler") })
        try await store.close()
    }

    @Test("key-path queries name the stored field, and a record without an added field matches as its default would")
    func keyPathQueries() async throws {
        let directory = try TemporaryDirectory(prefix: "model-evolution"); defer { directory.remove() }
        let store = try await Self.open(directory)
        try await store.insert(Self.dune)
        try await store.insert(BookV2(id: "b2", title: "Emma", writer: "Austen", year: 1815, rating: 4))
        try await store.insert(BookV2(id: "b6", title: "Beloved", writer: "Morrison", year: 1987, rating: 0))
        #expect(Field(\BookV2.writer).name == "author")
        #expect(Field(\BookV3.by).name == "author")
        let byAusten = try await store.fetch(BookV2.self, matching: Query(BookV2.self).filter(\BookV2.writer == "Austen"))
        #expect(byAusten.values.map(\.id) == ["b2"])
        let unrated = try await store.fetch(BookV2.self, matching: Query(BookV2.self).filter(\BookV2.rating == 0))
        #expect(unrated.values.map(\.id) == ["b1", "b6"], "b1 has no rating stored and reads the default 0")
        let rated = try await store.fetch(BookV2.self, matching: Query(BookV2.self).filter(\BookV2.rating > 0))
        #expect(rated.values.map(\.id) == ["b2"])
        let oldest = try await store.fetch(BookV2.self, matching: Query(BookV2.self).order(Field(\BookV2.year).descending))
        #expect(oldest.values.map(\.id) == ["b6", "b1", "b2"], "b1's year, stored as the text \"1965\", orders as the number it converts to")
        let sixties = try await store.fetch(BookV2.self, matching: Query(BookV2.self).filter(\BookV2.year < 1970 && \BookV2.year > 1900))
        #expect(sixties.values.map(\.id) == ["b1"])
        try await store.close()
    }

    struct Flags: SyncRecord {
        static let kind = "flags"
        var id: String
        var a: Bool
        var b: Bool
        var c: Bool
        var d: Bool?
        var e: Bool
        var count: Int8
        var when: Date?
        var note: String?
    }

    @Test("key paths tell apart every property, booleans included")
    func keyPathsTellPropertiesApart() {
        #expect(Field(\Flags.a).name == "a")
        #expect(Field(\Flags.b).name == "b")
        #expect(Field(\Flags.c).name == "c")
        #expect(Field(\Flags.d).name == "d")
        #expect(Field(\Flags.e).name == "e")
        #expect(Field(\Flags.count).name == "count")
        #expect(Field(\Flags.when).name == "when")
        #expect(Field(\Flags.note).name == "note")
    }

    struct Clashing: SyncRecord {
        static let kind = "clash"
        static let schemaVersion = 3
        static let migrations = [
            RecordMigration(to: 2, [.renameField("text", to: "body")]),
            RecordMigration(to: 3, [.addField("text", default: "")]),
        ]
        var id: String
        var body: String
        var text: String
    }

    struct OutOfOrder: SyncRecord {
        static let kind = "order"
        static let schemaVersion = 2
        static let migrations = [RecordMigration(to: 3, [.dropField("x")])]
        var id: String
    }

    /// The kind and reason of the `invalidMigrations` error `body` throws; anything else is an issue.
    static func migrationsRefusal(_ body: () async throws(SyncRecordError) -> Void) async -> (kind: String, reason: String)? {
        do {
            try await body()
        } catch {
            if case .invalidMigrations(let kind, let reason) = error { return (kind, reason) }
            Issue.record("expected invalidMigrations, got \(error)")
            return nil
        }
        Issue.record("the model was stored")
        return nil
    }

    @Test("migrations that give one stored name to two fields, or run past the model's version, are refused with the reason")
    func invalidMigrationsAreRefused() async throws {
        let directory = try TemporaryDirectory(prefix: "model-evolution"); defer { directory.remove() }
        let store = try await Self.open(directory)
        let clash = await Self.migrationsRefusal { () async throws(SyncRecordError) in _ = try await store.insert(Clashing(id: "c1", body: "x", text: "y")) }
        #expect(clash?.kind == "clash")
        #expect(clash?.reason.contains("\"text\"") == true)
        let order = await Self.migrationsRefusal { () async throws(SyncRecordError) in _ = try await store.insert(OutOfOrder(id: "o1")) }
        #expect(order?.reason.contains("version 3") == true)
        #expect(try await store.record("clash", id: "c1") == nil)
        try await store.close()
    }

    // MARK: Devices on other versions

    /// Version 1 of a score: an integer out of 5, and an optional note.
    struct ScoreV1: SyncRecord, Equatable {
        static let kind = "score"
        var id: String
        var title: String
        var stars: Int?
    }

    /// Version 2: half stars (a double), and who gave it.
    struct ScoreV2: SyncRecord, Equatable {
        static let kind = "score"
        static let schemaVersion = 2
        static let migrations = [
            RecordMigration(to: 2, [
                .convertField("stars", from: Int.self, to: Double.self) { Double($0) },
                .addField("by", default: "me"),
            ]),
        ]
        var id: String
        var title: String
        var stars: Double?
        var by: String
    }

    @Test("a record a newer version wrote reads on an older one as far as its model can say, is reported as newer, and keeps what it could not show")
    func newerRecordOnAnOlderDevice() async throws {
        let directory = try TemporaryDirectory(prefix: "model-evolution"); defer { directory.remove() }
        let store = try await Self.open(directory)
        try await store.insert(ScoreV2(id: "s1", title: "Dune", stars: 4.5, by: "ana"))
        try await store.insert(ScoreV2(id: "s2", title: "Emma", stars: 4.0, by: "ana"))
        try await store.insert(ScoreV1(id: "s3", title: "Kindred", stars: 5))
        #expect(try await store.record("score", id: "s1")?.modelVersion == 2)
        #expect(try await store.record("score", id: "s3")?.modelVersion == nil, "version 1 writes as every journal did")
        let seen = try await store.fetchAll(ScoreV1.self)
        #expect(seen.undecodable.isEmpty)
        #expect(seen.values == [ScoreV1(id: "s1", title: "Dune", stars: nil), ScoreV1(id: "s2", title: "Emma", stars: 4),
                                ScoreV1(id: "s3", title: "Kindred", stars: 5)])
        #expect(seen.writtenByNewerVersion == ["s1", "s2"])
        // The older version's edit of another field sends only that field: 4.5 and "ana" stay.
        try await store.update(ScoreV1.self, id: "s1") { $0.title = "Dune (1965)" }
        let stored = try #require(try await store.record("score", id: "s1"))
        #expect(stored.fields["stars"] == .double(4.5))
        #expect(stored.fields["by"] == .string("ana"))
        #expect(stored.fields["title"] == .string("Dune (1965)"))
        // Version 2 reads version 1's integer as a double, and its missing field as the default.
        #expect(try await store.fetch(ScoreV2.self, id: "s3") == ScoreV2(id: "s3", title: "Kindred", stars: 5, by: "me"))
        try await store.close()
    }

    struct StrictV1: SyncRecord {
        static let kind = "score"
        var id: String
        var title: String
        var stars: Int
    }

    @Test("a field a newer version wrote that an older model cannot hold and has no default for is reported with both versions, never guessed")
    func newerRecordWithNoWayToShowAField() async throws {
        let directory = try TemporaryDirectory(prefix: "model-evolution"); defer { directory.remove() }
        let store = try await Self.open(directory)
        try await store.insert(ScoreV2(id: "s1", title: "Dune", stars: 4.5, by: "ana"))
        let seen = try await store.fetchAll(StrictV1.self)
        #expect(seen.values.isEmpty)
        let report = try #require(seen.undecodable.first)
        #expect(report.path == "stars")
        #expect(report.reason.contains("written by model version 2, newer than this app's 1"))
        try await store.close()
    }

    // MARK: Typed transactions

    @Test("a typed transaction inserts, reads its own staged edits, updates only changed fields and deletes, all in one journal record")
    func typedTransaction() async throws {
        let directory = try TemporaryDirectory(prefix: "model-evolution"); defer { directory.remove() }
        let store = try await Self.open(directory)
        try await store.insert(BookV2(id: "b0", title: "Old", writer: "Anon", year: 1900, rating: 1))
        var seenInside: BookV2?
        let edits = try await store.write { tx in
            try tx.insert(BookV2(id: "b1", title: "Dune", writer: "Herbert", year: 1965, rating: 0))
            try tx.update(BookV2.self, id: "b1") { $0.rating = 5 }
            seenInside = try tx.fetch(BookV2.self, id: "b1")
            let unchanged = try tx.update(BookV2.self, id: "b0") { $0.rating = 1 }
            #expect(unchanged == nil, "nothing changed, nothing staged")
            try tx.delete(BookV2.self, id: "b0")
            #expect(try tx.fetch(BookV2.self, id: "b0") == nil)
            #expect(tx.record("book", id: "b1")?.fields["author"] == .string("Herbert"))
        }
        #expect(seenInside?.rating == 5)
        #expect(edits.count == 3)
        #expect(try await store.fetch(BookV2.self, id: "b1")?.rating == 5)
        #expect(try await store.fetch(BookV2.self, id: "b0") == nil)
        let update = try #require(try await store.pendingOperations(kind: "book", id: "b1").last?.operation)
        #expect(update.modelVersion == 2)
        try await store.close()
        // After a reopen the journal holds the same.
        let reopened = try await Self.open(directory)
        #expect(try await reopened.fetch(BookV2.self, id: "b1")?.rating == 5)
        #expect(try await reopened.fetch(BookV2.self, id: "b0") == nil)
        try await reopened.close()
    }

    struct Abandon: Error {}

    @Test("a typed transaction whose body throws writes nothing, and one that inserts a record the body can see is refused whole")
    func typedTransactionAllOrNothing() async throws {
        let directory = try TemporaryDirectory(prefix: "model-evolution"); defer { directory.remove() }
        let store = try await Self.open(directory)
        try await store.insert(BookV2(id: "b0", title: "Old", writer: "Anon", year: 1900, rating: 1))
        await #expect(throws: Abandon.self) {
            try await store.write { tx in
                try tx.insert(BookV2(id: "b1", title: "Dune", writer: "Herbert", year: 1965, rating: 0))
                throw Abandon()
            }
        }
        #expect(try await store.fetch(BookV2.self, id: "b1") == nil)
        await #expect(throws: SyncRecordError.store(.recordAlreadyExists(RecordKey(kind: "book", id: "b0")))) {
            try await store.write { tx in
                try tx.update(BookV2.self, id: "b0") { $0.rating = 3 }
                try tx.insert(BookV2(id: "b0", title: "Again", writer: "Anon", year: 1900, rating: 1))
            }
        }
        #expect(try await store.fetch(BookV2.self, id: "b0")?.rating == 1)
        try await store.close()
    }

    struct Shelved: SyncRecord, Equatable { static let kind = "shelved"; var id: String; var title: String; var shelf: String }

    @Test("a typed transaction that creates and then deletes a record leaves nothing of it, and its other edits stand")
    func transactionCreateThenDelete() async throws {
        let directory = try TemporaryDirectory(prefix: "model-evolution"); defer { directory.remove() }
        let store = try await Self.open(directory)
        try await store.insert(Shelved(id: "b1", title: "Dune", shelf: "to read"))
        let edits = try await store.write { tx in
            try tx.update(Shelved.self, id: "b1") { $0.shelf = "reading" }
            try tx.insert(Shelved(id: "b2", title: "Emma", shelf: "to read"))
            if let first = try tx.fetch(Shelved.self, id: "b1"), first.shelf == "reading" {
                try tx.delete(Shelved.self, id: "b2")
            }
        }
        #expect(edits.count == 3)
        #expect(try await store.fetchAll(Shelved.self).values == [Shelved(id: "b1", title: "Dune", shelf: "reading")])
        #expect(try await store.pendingOperations(kind: "shelved", id: "b2").isEmpty)
        try await store.close()
        let reopened = try await Self.open(directory)
        #expect(try await reopened.fetchAll(Shelved.self).values == [Shelved(id: "b1", title: "Dune", shelf: "reading")])
        try await reopened.close()
    }
}

import Foundation
import SyncJournal
import SyncJournalTesting
import Testing

/// Typed records through the store: insert, fetch, update, save, delete, records that no
/// longer decode, replay after reopening, and merge-fields conflicts on nested fields.
@Suite("Typed records in the store")
struct TypedRecordStoreTests {
    struct Address: Codable, Equatable, Sendable {
        var city: String
        var zip: String?
    }

    struct Note: SyncRecord, Equatable {
        static let kind = "note"
        var id: UUID
        var title: String
        var body: String
        var createdAt: Date
        var tags: Set<String>
        var address: Address
        var rating: Int?
    }

    struct Tag: SyncRecord, Equatable {
        static let kind = "tag"
        var id: String
        var name: String
    }

    static func note(_ id: UUID = UUID(), title: String = "Tapas") -> Note {
        Note(id: id, title: title, body: "Calle Mayor", createdAt: Date(timeIntervalSince1970: 1_764_000_000.5), tags: ["food"],
             address: Address(city: "Madrid", zip: nil), rating: nil)
    }

    /// A store on a fresh journal in `directory`, with merge-fields for notes.
    static func open(_ directory: TemporaryDirectory, name: String = "notes.journal") async throws -> LocalStore {
        var options = LocalStore.Options()
        options.conflictPolicies["note"] = .mergeFields
        return try await LocalStore.open(path: directory.file(name), options: options)
    }

    /// The error `body` throws, or nil; any other error is an issue.
    static func recordError(_ body: () async throws -> Void) async -> SyncRecordError? {
        do {
            try await body()
            return nil
        } catch let error as SyncRecordError {
            return error
        } catch {
            Issue.record("expected a SyncRecordError, got \(error)")
            return nil
        }
    }

    @Test("insert stores the properties as fields without the id, fetch gives the value back, and the edit names the queued create")
    func insertAndFetch() async throws {
        let directory = try TemporaryDirectory(prefix: "typed-records"); defer { directory.remove() }
        let store = try await Self.open(directory)
        let note = Self.note()
        let edit = try await store.insert(note)
        #expect(edit.kind == "note" && edit.id == note.id.uuidString.lowercased())
        let pending = try await store.pendingOperations(kind: "note", id: edit.id)
        #expect(pending.map(\.operation.id) == [edit.operation])
        let stored = try #require(try await store.record("note", id: edit.id))
        #expect(stored.fields["id"] == nil, "the id is the record id, not a field")
        #expect(stored.fields["createdAt"] == .timestamp(1_764_000_000_500_000))
        #expect(stored.fields["address"] == .object(["city": .string("Madrid"), "zip": .null]))
        #expect(stored.fields["rating"] == .null)
        #expect(try await store.fetch(Note.self, id: note.id) == note)
        #expect(try await store.fetch(Note.self, id: UUID()) == nil)
        #expect(await Self.recordError { try await store.insert(note) } == .store(.recordAlreadyExists(RecordKey(kind: "note", id: edit.id))))
        try await store.close()
    }

    @Test("update and save queue only the fields that changed; nothing changed queues nothing and returns nil")
    func onlyChangedFields() async throws {
        let directory = try TemporaryDirectory(prefix: "typed-records"); defer { directory.remove() }
        let store = try await Self.open(directory)
        let server = ReferenceServer()
        let engine = SyncEngine(store: store, transport: server.transport(user: "u1"), options: .init(kinds: ["note"]))
        let note = Self.note()
        try await store.insert(note)
        _ = await engine.sync()
        let id = note.id.uuidString.lowercased()
        #expect(try await store.pendingOperations(kind: "note", id: id).isEmpty)

        let edit = try #require(try await store.update(Note.self, id: note.id) { $0.address.zip = "28013"; $0.rating = 4 })
        let update = try #require(try await store.pendingOperations(kind: "note", id: id).last?.operation)
        #expect(update.id == edit.operation)
        #expect(update.fields == ["address": .object(["city": .string("Madrid"), "zip": .string("28013")]), "rating": .int(4)])
        // Pushed, so the next edit is not merged into this one by compaction.
        _ = await engine.sync()

        let original = try #require(try await store.fetch(Note.self, id: note.id))
        var copy = original
        copy.rating = nil
        copy.tags.insert("late-night")
        let saved = try #require(try await store.save(copy, original: original))
        let last = try #require(try await store.pendingOperations(kind: "note", id: id).last?.operation)
        #expect(last.id == saved.operation)
        #expect(last.fields == ["rating": .null, "tags": .stringSet(["food", "late-night"])], "clearing an optional writes null")

        #expect(try await store.save(copy, original: copy) == nil)
        #expect(try await store.update(Note.self, id: note.id) { $0.title = $0.title } == nil)
        var moved = copy
        moved.id = UUID()
        #expect(await Self.recordError { try await store.save(moved, original: copy) }
            == .idChanged(kind: "note", from: id, to: moved.id.uuidString.lowercased()))
        #expect(try await store.fetch(Note.self, id: note.id) == copy)
        try await store.close()
    }

    @Test("delete hides the record; fetching, updating or deleting a missing record is notFound with kind and id")
    func deleteAndNotFound() async throws {
        let directory = try TemporaryDirectory(prefix: "typed-records"); defer { directory.remove() }
        let store = try await Self.open(directory)
        try await store.insert(Tag(id: "t1", name: "food"))
        let edit = try await store.delete(Tag.self, id: "t1")
        #expect(edit.kind == "tag" && edit.id == "t1")
        #expect(try await store.fetch(Tag.self, id: "t1") == nil)
        #expect(await Self.recordError { try await store.delete(Tag.self, id: "t1") } == .notFound(kind: "tag", id: "t1"))
        #expect(await Self.recordError { try await store.update(Tag.self, id: "t1") { $0.name = "x" } } == .notFound(kind: "tag", id: "t1"))
        try await store.close()
    }

    @Test("a record another client wrote with a field of the wrong type is reported with its path by fetchAll and fetch, never dropped")
    func undecodableRecordsAreReported() async throws {
        let directory = try TemporaryDirectory(prefix: "typed-records"); defer { directory.remove() }
        let store = try await Self.open(directory)
        let server = ReferenceServer()
        let good = Self.note(title: "Good")
        let badID = UUID()
        var badFields = try FieldValueEncoder().encode(Self.note(badID, title: "Bad"))
        badFields["id"] = nil
        badFields["address"] = .object(["city": .int(7)])
        await server.write(user: "u1", kind: "note", id: badID.uuidString.lowercased(), fields: badFields)
        await server.write(user: "u1", kind: "note", id: "not-a-uuid", fields: ["title": .string("odd id")])
        await server.write(user: "u1", kind: "note", id: "CE56971C-DE35-4897-821E-FC0B1046C8BF", fields: ["title": .string("uppercase id")])
        try await store.insert(good)
        let engine = SyncEngine(store: store, transport: server.transport(user: "u1"), options: .init(kinds: ["note"]))
        _ = await engine.sync()

        let all = try await store.fetchAll(Note.self)
        #expect(all.values == [good])
        #expect(all.undecodable.count == 3)
        let bad = try #require(all.undecodable.first { $0.key.id == badID.uuidString.lowercased() })
        #expect(bad.path == "address.city")
        #expect(bad.reason == "expected a string, found int64")
        let odd = try #require(all.undecodable.first { $0.key.id == "not-a-uuid" })
        #expect(odd.path == "id")
        let uppercase = try #require(all.undecodable.first { $0.key.id == "CE56971C-DE35-4897-821E-FC0B1046C8BF" })
        #expect(uppercase.path == "id", "only the lowercase text is a UUID record id, so ids read back as they are stored")
        #expect(await Self.recordError { _ = try await store.fetch(Note.self, id: badID) } == .undecodable(bad))
        #expect(try await store.record("note", id: badID.uuidString.lowercased())?.fields["address"] == .object(["city": .int(7)]))
        try await store.close()
    }

    @Test("typed values are replayed from the journal after the store is reopened")
    func reopenReplaysTypedValues() async throws {
        let directory = try TemporaryDirectory(prefix: "typed-records"); defer { directory.remove() }
        var note = Self.note()
        do {
            let store = try await Self.open(directory)
            try await store.insert(note)
            try await store.update(Note.self, id: note.id) { $0.address.zip = "28013" }
            try await store.close()
        }
        note.address.zip = "28013"
        let reopened = try await Self.open(directory)
        #expect(try await reopened.fetch(Note.self, id: note.id) == note)
        #expect(try await reopened.fetchAll(Note.self).values == [note])
        try await reopened.close()
    }

    @Test("a value that does not encode is encodingFailed with its path; a field nested too deep is refused by the store")
    func encodingFailures() async throws {
        struct Counter: SyncRecord {
            static let kind = "counter"
            var id: String
            var count: UInt64
        }
        let directory = try TemporaryDirectory(prefix: "typed-records"); defer { directory.remove() }
        let store = try await Self.open(directory)
        guard case .encodingFailed(let kind, let id, let path, _)? = await Self.recordError({ try await store.insert(Counter(id: "c", count: .max)) }) else {
            Issue.record("expected encodingFailed")
            return
        }
        #expect(kind == "counter" && id == "c" && path == "count")
        let deep = (0..<11).reduce(FieldValue.null) { inner, _ in .array([inner]) }
        await #expect(throws: StoreError.invalidFields(kind: "pin", id: "p", reason: "field \"deep\" nests arrays and objects more than 10 deep")) {
            try await store.create("pin", id: "p", fields: ["deep": deep])
        }
        try await store.close()
    }

    @Test("merge-fields works per top-level field: a nested object the server changed and a title the device changed both survive as a merge; the same object changed on both keeps the server's and is reported lost, as a conflict")
    func mergeFieldsOnNestedObject() async throws {
        let directory = try TemporaryDirectory(prefix: "typed-records"); defer { directory.remove() }
        let server = ReferenceServer()
        let store = try await Self.open(directory)
        let engine = SyncEngine(store: store, transport: server.transport(user: "u1"), options: .init(kinds: ["note"]))
        let note = Self.note()
        let id = note.id.uuidString.lowercased()
        try await store.insert(note)
        _ = await engine.sync()

        // Another client moves the address; this device retitles the note.
        await server.tick(10)
        _ = await server.update(kind: "note", id: id, changes: ["address": .object(["city": .string("Sevilla"), "zip": .string("41001")])])
        let retitled = try #require(try await store.update(Note.self, id: note.id) { $0.title = "Tapas Sol" })
        _ = await engine.sync()
        guard case .merged(let first) = await store.outcome(of: retitled.operation) else { Issue.record("expected a merge"); return }
        #expect(first.resolution.strategy == .mergeFields && first.resolution.lostFields.isEmpty)
        let merged = try #require(try await store.fetch(Note.self, id: note.id))
        #expect(merged.title == "Tapas Sol" && merged.address == Address(city: "Sevilla", zip: "41001"))
        #expect(await server.row(kind: "note", id: id)?.fields["title"] == .string("Tapas Sol"))

        // Both change the address: the object is one value, so the server's wins and it is reported lost.
        await server.tick(10)
        _ = await server.update(kind: "note", id: id, changes: ["address": .object(["city": .string("Cádiz"), "zip": .null])])
        let moved = try #require(try await store.update(Note.self, id: note.id) { $0.address.zip = "41002" })
        _ = await engine.sync()
        guard case .conflicted(let second) = await store.outcome(of: moved.operation) else { Issue.record("expected a conflict"); return }
        #expect(second.resolution.lostFields == ["address"])
        #expect(try await store.fetch(Note.self, id: note.id)?.address == Address(city: "Cádiz", zip: nil))
        try await store.close()
    }

    @Test("a query fetched as a type gives the values in the query's order, lists a record that does not decode apart, and refuses a query about another kind")
    func typedQuery() async throws {
        let directory = try TemporaryDirectory(prefix: "typed-query"); defer { directory.remove() }
        let store = try await Self.open(directory)
        let first = Self.note(title: "Bravo")
        let second = Self.note(title: "Alpha")
        try await store.insert(first)
        try await store.insert(second)
        // Another client's record of the same kind with a title that is not text.
        try await store.create("note", id: UUID().uuidString.lowercased(), fields: ["title": .int(7)])

        let byTitle = Query(Note.self).order(Field("title").descending)
        let notes = try await store.fetch(Note.self, matching: byTitle)
        #expect(notes.values.map(\.title) == ["Bravo", "Alpha"])
        #expect(notes.undecodable.count == 1)
        #expect(notes.undecodable.first?.path == "title", "\(notes.undecodable)")

        let observed = TypedRecords<Note>(decoding: try await store.fetch(byTitle))
        #expect(observed.values == notes.values)

        let error = await Self.recordError { _ = try await store.fetch(Note.self, matching: Query("tag")) }
        #expect(error == .kindMismatch(query: "tag", record: "note"))
        try await store.close()
    }
}

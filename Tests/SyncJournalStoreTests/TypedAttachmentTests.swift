import Foundation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import Testing

/// Typed records holding attachments: an `Attachment` property is stored as
/// the attachment field value itself, read back from it, and nothing else.
@Suite("Typed records: Attachment properties")
struct TypedAttachmentTests {
    struct Scan: Codable, Equatable {
        var caption: String
        var image: SyncJournalProtocol.Attachment
    }

    struct Note: SyncRecord, Equatable {
        static let kind = "note"
        var id: String
        var title: String
        var photo: SyncJournalProtocol.Attachment
        var thumbnail: SyncJournalProtocol.Attachment?
        var pages: [SyncJournalProtocol.Attachment]
        var cover: Scan?
    }

    static let empty = ContentHash("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")!
    static let photo = SyncJournalProtocol.Attachment(content: empty, size: 0, mediaType: "image/jpeg")

    /// A store on a fresh journal in `directory`.
    static func open(_ directory: TemporaryDirectory) async throws -> LocalStore {
        try await LocalStore.open(path: directory.file("notes.journal"))
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

    @Test("an Attachment property encodes as the attachment field value, an absent optional as null, an array and a nested struct hold theirs, and all decode back")
    func encodesAsTheFieldValue() throws {
        let page = SyncJournalProtocol.Attachment(content: Self.empty, size: 0, mediaType: "image/png")
        let note = Note(id: "n1", title: "Tapas", photo: Self.photo, thumbnail: nil, pages: [page, Self.photo],
                        cover: Scan(caption: "Front", image: page))
        let fields = try FieldValueEncoder().encode(note)
        #expect(fields["photo"] == .attachment(Self.photo))
        #expect(fields["thumbnail"] == .null)
        #expect(fields["pages"] == .array([.attachment(page), .attachment(Self.photo)]))
        #expect(fields["cover"] == .object(["caption": .string("Front"), "image": .attachment(page)]))
        #expect(try FieldValueDecoder().decode(Note.self, from: fields) == note)
        #expect(try FieldValueEncoder().encodeValue(Optional(Self.photo)) == .attachment(Self.photo))
        #expect(try FieldValueDecoder().decode(SyncJournalProtocol.Attachment?.self, fromValue: .null) == nil)
    }

    @Test("a typed record holding attachments round-trips through a local store: insert, fetch, an update that replaces the photo queues only that field, and a reopen reads it back")
    func roundTripThroughTheStore() async throws {
        let directory = try TemporaryDirectory(prefix: "typed-attachments"); defer { directory.remove() }
        let store = try await Self.open(directory)
        let photo = try await store.attach(Array("a photo's bytes".utf8), mediaType: "image/jpeg")
        let retake = try await store.attach(Array("a better photo's bytes".utf8), mediaType: "image/jpeg")
        let page = try await store.attach(Array("%PDF-1.7".utf8), mediaType: "application/pdf")
        let note = Note(id: "n1", title: "Tapas", photo: photo, thumbnail: nil, pages: [page, photo], cover: Scan(caption: "Menu", image: page))
        try await store.insert(note)
        #expect(try await store.record("note", id: "n1")?.fields["photo"] == .attachment(photo))
        #expect(try await store.fetch(Note.self, id: "n1") == note)
        // The file is reachable from the typed value.
        #expect(try await store.attachmentFile(note.photo) != nil)

        // A note the server holds: the update queues only the fields that changed.
        var held = note
        held.id = "n2"
        try await store.applyPulledPage(kind: "note", rows: [ServerRow(kind: "note", id: "n2", fields: try FieldValueEncoder().encode(held)
            .filter { $0.key != "id" }, updatedAt: 10)], cursor: nil)
        #expect(try await store.fetch(Note.self, id: "n2") == held)
        let edit = try #require(try await store.update(Note.self, id: "n2") { $0.photo = retake; $0.thumbnail = photo })
        let update = try #require(try await store.pendingOperations(kind: "note", id: "n2").last?.operation)
        #expect(update.id == edit.operation)
        #expect(update.fields == ["photo": .attachment(retake), "thumbnail": .attachment(photo)])
        held.photo = retake
        held.thumbnail = photo
        #expect(try await store.fetch(Note.self, id: "n2") == held)
        // A key path to an attachment property names its field.
        let matching = try await store.fetch(Note.self, matching: Query(Note.self).filter(\Note.photo == retake))
        #expect(matching.values.map(\.id) == ["n2"])
        try await store.close()

        let reopened = try await Self.open(directory)
        #expect(try await reopened.fetch(Note.self, id: "n1") == note)
        #expect(try await reopened.fetch(Note.self, id: "n2") == held)
        try await reopened.update(Note.self, id: "n2") { $0.thumbnail = nil }
        #expect(try await reopened.record("note", id: "n2")?.fields["thumbnail"] == .null, "clearing it is an edit of the field")
        #expect(try await reopened.fetch(Note.self, id: "n2")?.thumbnail == nil)
        try await reopened.close()
    }

    @Test("a field holding another type where an Attachment is expected is an undecodable record naming the field, as any other mismatch")
    func otherTypesAreUndecodable() async throws {
        let directory = try TemporaryDirectory(prefix: "typed-attachments"); defer { directory.remove() }
        let store = try await Self.open(directory)
        let base: [String: FieldValue] = ["title": .string("Tapas"), "photo": .attachment(Self.photo), "pages": .array([])]
        // Another client stored text, a null, bytes and an element of another type.
        let stored: [(String, [String: FieldValue], String, String)] = [
            ("n-text", base.merging(["photo": .string("tapas.jpg")]) { $1 }, "photo", "expected an attachment, found string"),
            ("n-null", base.merging(["photo": .null]) { $1 }, "photo", "expected an attachment, found null"),
            ("n-bytes", base.merging(["thumbnail": .bytes([0xFF, 0xD8])]) { $1 }, "thumbnail", "expected an attachment, found bytes"),
            ("n-list", base.merging(["pages": .array([.attachment(Self.photo), .int(2)])]) { $1 }, "pages[1]", "expected an attachment, found int64"),
            ("n-cover", base.merging(["cover": .object(["caption": .string("c"), "image": .uuid(UUID())])]) { $1 }, "cover.image",
             "expected an attachment, found uuid"),
        ]
        for (id, fields, _, _) in stored { try await store.create("note", id: id, fields: fields) }
        for (id, _, path, reason) in stored {
            let error = await Self.recordError { _ = try await store.fetch(Note.self, id: id) }
            guard case .undecodable(let report)? = error else { Issue.record("\(id): expected undecodable, got \(String(describing: error))"); continue }
            #expect(report.key == RecordKey(kind: "note", id: id) && report.path == path && report.reason == reason, "\(id): \(report)")
        }
        // Listed, never dropped, beside the records that decode.
        try await store.create("note", id: "n-good", fields: base)
        let all = try await store.fetchAll(Note.self)
        #expect(all.values.map(\.id) == ["n-good"])
        #expect(all.undecodable.map(\.key.id) == stored.map(\.0).sorted())
        try await store.close()
    }

    @Test("a typed record holding an attachment the journal cannot keep is refused at insert and update, naming the field, and nothing is journaled")
    func invalidAttachmentIsRefused() async throws {
        let directory = try TemporaryDirectory(prefix: "typed-attachments"); defer { directory.remove() }
        let store = try await Self.open(directory)
        let bad = SyncJournalProtocol.Attachment(content: Self.empty, size: -1, mediaType: "image/jpeg")
        let note = Note(id: "n1", title: "Tapas", photo: Self.photo, thumbnail: nil, pages: [], cover: nil)
        var wrong = note
        wrong.pages = [bad]
        #expect(await Self.recordError { try await store.insert(wrong) }
            == .store(.invalidFields(kind: "note", id: "n1", reason: "field \"pages\": \(bad.problem!)")))
        try await store.insert(note)
        #expect(await Self.recordError { try await store.update(Note.self, id: "n1") { $0.thumbnail = bad } }
            == .store(.invalidFields(kind: "note", id: "n1", reason: "field \"thumbnail\": \(bad.problem!)")))
        try await store.close()
        let reopened = try await Self.open(directory)
        #expect(try await reopened.fetch(Note.self, id: "n1") == note)
        try await reopened.close()
    }

    @Test("an attachment's own coding is the sync protocol's JSON members, and refuses a hash that is not 64 lowercase hex digits or a value with a problem")
    func codableOutsideRecords() throws {
        let json = try JSONEncoder().encode(Self.photo)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object["sha256"] as? String == Self.empty.hex && object["size"] as? Int == 0 && object["type"] as? String == "image/jpeg")
        #expect(object.count == 3)
        #expect(try JSONDecoder().decode(SyncJournalProtocol.Attachment.self, from: json) == Self.photo)
        for bad in [#"{"sha256":"\#(Self.empty.hex.uppercased())","size":0,"type":"image/jpeg"}"#,
                    #"{"sha256":"abc","size":0,"type":"image/jpeg"}"#,
                    #"{"sha256":"\#(Self.empty.hex)","size":-1,"type":"image/jpeg"}"#,
                    #"{"sha256":"\#(Self.empty.hex)","size":0,"type":"jpeg"}"#,
                    #"{"sha256":"\#(Self.empty.hex)","size":0}"#] {
            #expect(throws: DecodingError.self, "\(bad)") { _ = try JSONDecoder().decode(SyncJournalProtocol.Attachment.self, from: Data(bad.utf8)) }
        }
    }
}

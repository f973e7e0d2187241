import Foundation
import Testing
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore

/// Timestamps, UUIDs, arrays and objects in sync-server's tables: every backend stores the
/// encoded field list and gives the same values back, after a reopen too.
@Suite("storage of typed field values, every backend")
struct TypedFieldStorageTests {
    static let deepest = (0..<FieldValue.maximumNestingDepth).reduce(FieldValue.string("bottom")) { inner, level in
        level % 2 == 0 ? .array([inner]) : .object(["level\(level)": inner])
    }

    /// The SHA-256 of "abc": the attachment's content, uploaded before the push refers to it.
    static let photo = ContentHash("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")!

    static let fields: [String: FieldValue] = [
        "createdAt": .timestamp(1_764_000_000_123_456), "before": .timestamp(.min),
        "owner": .uuid(UUID(uuidString: "ce56971c-de35-4897-821e-fc0b1046c8bf")!),
        "photo": .attachment(Attachment(content: photo, size: 3, mediaType: "image/heic")),
        "mixed": .array([.null, .double(.nan), .stringSet(["a"]), .bytes([0, 255]), .object([:]), .array([])]),
        "address": .object(["city": .string("München"), "geo": .array([.double(48.1), .double(11.5)])]),
        "deepest": deepest,
    ]

    @Test("a create and an update holding typed values read, pull and reopen with the same values", arguments: StorageBackend.tested)
    func typedValuesRoundTrip(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        let attachments = try #require(storage as? any AttachmentStorage)
        #expect(try attachments.uploadAttachment(user: "u1", content: Self.photo, size: 3, offset: 0, bytes: Array("abc".utf8)).stored)
        let created = try #require(try storage.push(user: "u1", [Mutations.create("n1", kind: "note", Self.fields)]).first?.outcome.appliedRow)
        #expect(created.fields == Self.fields)
        let change: [String: FieldValue] = ["address": .object(["city": .string("Roma")])]
        let updated = try #require(try storage.push(user: "u1", [Mutations.update("n1", kind: "note", base: created.updatedAt, change)])
            .first?.outcome.appliedRow)
        let expected = Self.fields.merging(change) { _, new in new }
        #expect(updated.fields == expected, "an update replaces a nested object whole: merging is per top-level field")
        #expect(try storage.read(user: "u1", kind: "note", id: "n1")?.fields == expected)
        #expect(try storage.pull(user: "u1", PullRequest(cursors: ["note": nil], limit: 10)).rows.map(\.fields) == [expected])
        let reopened = try subject.reopen()
        defer { reopened.closeConnections() }
        #expect(try reopened.read(user: "u1", kind: "note", id: "n1")?.fields == expected)
    }

    @Test("a mutation nesting deeper than the limit is rejected permanently and nothing is stored", arguments: StorageBackend.tested)
    func tooDeepIsRejected(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let tooDeep: FieldValue = .array([Self.deepest])
        let outcome = try subject.storage.push(user: "u1", [Mutations.create("n1", kind: "note", ["deep": tooDeep])]).first?.outcome
        #expect(outcome == .rejected(reason: "field \"deep\" nests arrays and objects more than 10 deep", permanent: true))
        #expect(try subject.storage.read(user: "u1", kind: "note", id: "n1") == nil)
    }
}

import SyncJournalCore
import SyncJournalFieldCodec
import SyncJournalProtocol
import Testing

/// An attachment as a field value: its journal encoding (tag 12), the
/// values it refuses, and where it sits in the query order.
@Suite("attachment field values")
struct AttachmentValueTests {
    static let empty = ContentHash("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")!
    static let photo = Attachment(content: empty, size: 5_242_880, mediaType: "image/jpeg")

    private func decoded(_ bytes: [UInt8]) throws(ByteReader.Failure) -> FieldValue {
        var reader = ByteReader(bytes)
        let value = try FieldValue.decode(from: &reader)
        try reader.expectEnd()
        return value
    }

    private func encoded(_ value: FieldValue) -> [UInt8] {
        var writer = ByteWriter()
        value.encode(into: &writer)
        return writer.bytes
    }

    @Test("an attachment encodes as tag 12, the 32 hash bytes, the size as a varint and the media type, and reads back equal")
    func roundTrip() throws {
        let bytes = encoded(.attachment(Self.photo))
        #expect(bytes.first == 12 && Array(bytes[1...32]) == Self.empty.bytes)
        #expect(bytes.count == FieldValue.attachment(Self.photo).encodedLength)
        #expect(try decoded(bytes) == .attachment(Self.photo))
        let nested = FieldValue.object(["a.jpg": .attachment(Self.photo), "list": .array([.attachment(Attachment(content: Self.empty, size: 0))])])
        #expect(try decoded(encoded(nested)) == nested)
        #expect(nested.attachments.count == 2)
    }

    @Test("every cut of an encoded attachment is refused, never read as another value")
    func everyTruncation() {
        let bytes = encoded(.attachment(Self.photo))
        for length in 0..<bytes.count {
            #expect(throws: ByteReader.Failure.self, "cut at \(length)") { _ = try decoded(Array(bytes[..<length])) }
        }
    }

    @Test("a media type that is not type/subtype in printable ASCII, and a size past Int64, are refused on read")
    func badValuesAreRefused() {
        for type in ["jpeg", "/jpeg", "image/", "a/b/c", "image/j peg", "image/jp\u{e9}g", ""] {
            let bytes = encoded(.attachment(Attachment(content: Self.empty, size: 1, mediaType: type)))
            #expect(throws: ByteReader.Failure.self, "\(type)") { _ = try decoded(bytes) }
            #expect(Attachment(content: Self.empty, size: 1, mediaType: type).problem != nil)
        }
        var writer = ByteWriter()
        writer.writeUInt8(12)
        writer.writeRaw(Self.empty.bytes)
        writer.writeVarint(UInt64(Int64.max) + 1)
        writer.writeString("image/png")
        #expect(throws: ByteReader.Failure.self) { _ = try decoded(writer.bytes) }
        #expect(Attachment(content: Self.empty, size: -1).problem != nil)
        #expect(Self.photo.problem == nil)
    }

    @Test("content hashes have one spelling: 64 lowercase hex digits")
    func contentHashSpelling() {
        #expect(ContentHash(Self.empty.hex) == Self.empty)
        #expect(ContentHash(Self.empty.hex.uppercased()) == nil)
        #expect(ContentHash(String(Self.empty.hex.dropLast())) == nil)
        #expect(ContentHash(Self.empty.hex.replacingOccurrences(of: "e", with: "g")) == nil)
        #expect(ContentHash(bytes: SHA256.digest([UInt8]())) == Self.empty)
    }
}

import Foundation
import Testing
import SyncJournalCore
import SyncJournalFieldCodec
import SyncJournalProtocol
import SyncJournalStore

/// Timestamps, UUIDs, arrays and objects in the binary field codec: round trips,
/// the byte layouts of journals/FORMAT.md, the nesting limit, and clean failures.
@Suite("Field codec: timestamps, UUIDs, arrays and objects")
struct NestedFieldValueCodecTests {
    static let sampleUUID = UUID(uuidString: "CE56971C-DE35-4897-821E-FC0B1046C8BF")!

    /// A value holding every type, nested a few levels.
    static let nested: FieldValue = .object([
        "when": .timestamp(1_764_000_000_123_456),
        "who": .uuid(sampleUUID),
        "list": .array([.int(1), .string("two"), .null, .array([]), .object([:]), .double(-0.0),
                        .stringSet(["b", "a"]), .bytes([0, 255]), .bool(true)]),
        "address": .object(["city": .string("München"), "zip": .string("80331"), "geo": .array([.double(48.1), .double(11.5)])]),
    ])

    private func encoded(_ value: FieldValue) -> [UInt8] {
        var writer = ByteWriter()
        value.encode(into: &writer)
        return writer.bytes
    }

    private func decoded(_ bytes: [UInt8]) throws(ByteReader.Failure) -> FieldValue {
        var reader = ByteReader(bytes)
        let value = try FieldValue.decode(from: &reader)
        try reader.expectEnd()
        return value
    }

    /// An array nested `depth` deep around the int 7.
    static func arrays(depth: Int) -> FieldValue {
        (0..<depth).reduce(FieldValue.int(7)) { inner, _ in .array([inner]) }
    }

    /// An object nested `depth` deep around the int 7.
    static func objects(depth: Int) -> FieldValue {
        (0..<depth).reduce(FieldValue.int(7)) { inner, _ in .object(["k": inner]) }
    }

    @Test("every new type round-trips through the binary codec, alone and nested",
          arguments: [FieldValue.timestamp(0), .timestamp(-1), .timestamp(.min), .timestamp(.max), .uuid(sampleUUID),
                      .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))), .array([]), .object([:]),
                      .array([.array([.array([])])]), nested])
    func roundTrips(value: FieldValue) throws {
        #expect(try decoded(encoded(value)) == value)
    }

    @Test("the byte layouts are those of the format: tag 8 zigzag, tag 9 sixteen bytes, tag 10 count and values, tag 11 a field list")
    func byteLayouts() {
        #expect(encoded(.timestamp(-2)) == [8, 3])
        #expect(encoded(.uuid(Self.sampleUUID)) == [9, 0xCE, 0x56, 0x97, 0x1C, 0xDE, 0x35, 0x48, 0x97, 0x82, 0x1E, 0xFC, 0x0B, 0x10, 0x46, 0xC8, 0xBF])
        #expect(encoded(.array([.int(1), .null])) == [10, 2, 3, 2, 0])
        #expect(encoded(.object(["b": .bool(true), "a": .array([])])) == [11, 2, 1, 0x61, 10, 0, 1, 0x62, 2])
    }

    @Test("arrays and objects nested 10 deep decode; 11 deep is a decoding error, never a crash", arguments: [true, false])
    func nestingLimit(useArrays: Bool) throws {
        let deepest = useArrays ? Self.arrays(depth: 10) : Self.objects(depth: 10)
        #expect(deepest.nestingDepth == 10)
        #expect(try decoded(encoded(deepest)) == deepest)
        let tooDeep = useArrays ? Self.arrays(depth: 11) : Self.objects(depth: 11)
        #expect(tooDeep.nestingDepth == 11)
        let bytes = encoded(tooDeep)
        #expect(throws: ByteReader.Failure.invalid("arrays and objects nested more than 10 deep", at: useArrays ? 20 : 40)) {
            _ = try decoded(bytes)
        }
    }

    @Test("a million nested array tags are refused at the eleventh, without deep recursion")
    func hugeNestingIsRefusedEarly() {
        let bytes = [UInt8](repeating: 0, count: 2_000_000).enumerated().map { $0.offset % 2 == 0 ? UInt8(10) : UInt8(1) }
        #expect(throws: ByteReader.Failure.invalid("arrays and objects nested more than 10 deep", at: 20)) {
            _ = try decoded(bytes)
        }
    }

    @Test("nesting depth stops counting just past the limit")
    func nestingDepthIsBounded() {
        #expect(Self.arrays(depth: 500).nestingDepth == FieldValue.maximumNestingDepth + 1)
        #expect(FieldValue.int(1).nestingDepth == 0)
        #expect(FieldValue.array([]).nestingDepth == 1)
        #expect(FieldValue.object(["a": .array([.object([:])])]).nestingDepth == 3)
    }

    @Test("every truncation of an encoded nested value fails with a typed error")
    func everyTruncationFails() {
        let bytes = encoded(Self.nested)
        for length in 0..<bytes.count {
            #expect(throws: ByteReader.Failure.self, "truncated to \(length) of \(bytes.count) bytes") {
                _ = try decoded(Array(bytes.prefix(length)))
            }
        }
    }

    @Test("every single-byte change of an encoded nested value either decodes to a valid value or fails with a typed error")
    func everyByteChangeIsSafe() {
        let bytes = encoded(Self.nested)
        for index in bytes.indices {
            for replacement in [UInt8(0), 1, 7, 8, 9, 10, 11, 12, 0x7F, 0x80, 0xFF] where replacement != bytes[index] {
                var changed = bytes
                changed[index] = replacement
                do {
                    let value = try decoded(changed)
                    #expect(value.nestingDepth <= FieldValue.maximumNestingDepth)
                } catch {
                    // A typed ByteReader.Failure: the change was refused.
                }
            }
        }
    }

    @Test("malformed new values are refused: unknown tag 13, object members out of order, an empty member name")
    func malformedValuesAreRefused() {
        #expect(throws: ByteReader.Failure.invalid("unknown field type 13", at: 0)) { _ = try decoded([13]) }
        #expect(throws: ByteReader.Failure.invalid("field names out of order or repeated", at: 5)) {
            _ = try decoded([11, 2, 1, 0x62, 0, 1, 0x61, 0])
        }
        #expect(throws: ByteReader.Failure.invalid("empty field name", at: 2)) { _ = try decoded([11, 1, 0, 0]) }
        #expect(throws: ByteReader.Failure.self) { _ = try decoded([10, 5, 0]) }
        #expect(throws: ByteReader.Failure.self) { _ = try decoded([9, 1, 2, 3]) }
    }

    @Test("a field list holding nested values takes the full decoder, not the plain skip")
    func plainSkipDeclinesNestedValues() {
        var writer = ByteWriter()
        FieldListCodec.encode(["a": .array([.int(1)])], into: &writer)
        var reader = ByteReader(writer.bytes)
        #expect(!FieldListCodec.skipIfPlain(&reader))
    }

    @Test("an operation with nested fields round-trips through its record encoding")
    func operationRoundTrips() throws {
        let operation = JournalOperation(id: OperationID(bytes: Array(repeating: 7, count: 16))!, kind: .create, entity: "note",
                                         recordID: "n1", fields: ["payload": Self.nested, "at": .timestamp(5)], queuedAt: 1)
        #expect(try JournalOperation.decode(operation.encoded()) == operation)
    }

    @Test("equal nested values hash equal; values of different types are never equal")
    func equalityAndHashing() {
        #expect(Set([Self.nested, Self.nested]).count == 1)
        #expect(FieldValue.timestamp(5) != .int(5))
        #expect(FieldValue.array([.string("a")]) != .stringSet(["a"]))
        #expect(FieldValue.object([:]) != .array([]))
    }

    @Test("a Date becomes a timestamp rounded to the microsecond, and back")
    func dateConvenience() {
        #expect(FieldValue.timestamp(Date(timeIntervalSince1970: 1.5)) == .timestamp(1_500_000))
        #expect(FieldValue.timestamp(Date(timeIntervalSince1970: -0.000_000_4)) == .timestamp(0))
        #expect(FieldValue.timestamp(1_500_000).date == Date(timeIntervalSince1970: 1.5))
        #expect(FieldValue.int(1).date == nil)
    }

    @Test("field lists too deep or with an empty member name are a problem the store and servers refuse")
    func problems() {
        #expect(FieldValue.problem(in: ["a": Self.arrays(depth: 10)]) == nil)
        #expect(FieldValue.problem(in: ["a": Self.arrays(depth: 11)]) == "field \"a\" nests arrays and objects more than 10 deep")
        #expect(FieldValue.problem(in: ["a": .array([.object(["": .null])])]) == "field \"a\" holds an object member with an empty name")
        #expect(FieldValue.problem(in: ["": .null]) == "empty field name")
    }
}

import Foundation
import SyncJournalProtocol
import SyncJournalWire
import Testing

@Suite("Field values on the wire")
struct FieldValueCodecTests {
    static func decode(_ text: String) throws(WireError) -> FieldValue {
        try FieldValueCodec.decode(try JSONValue(parsing: bytes(text)), at: "$.v")
    }

    @Test("every FieldValue case round-trips through JSON bytes with the same bits", arguments: everyFieldValue.keys.sorted())
    func roundTrip(name: String) throws {
        let value = try #require(everyFieldValue[name])
        let text = FieldValueCodec.encode(value).encoded()
        let back = try FieldValueCodec.decode(try JSONValue(parsing: text), at: "$")
        #expect(back == value, "\(String(decoding: text, as: UTF8.self))")
    }

    @Test("each case has the wire form PROTOCOL.md gives")
    func wireForms() {
        let cases: [(FieldValue, String)] = [
            (.null, "null"), (.bool(true), "true"), (.int(-42), "-42"), (.int(.min), "-9223372036854775808"),
            (.double(2.5), "2.5"), (.double(1), "1.0"), (.double(-0.0), "-0.0"), (.double(1e300), "1e+300"),
            (.double(.nan), #"{"double":"nan"}"#), (.double(.infinity), #"{"double":"inf"}"#), (.double(-.infinity), #"{"double":"-inf"}"#),
            (.string("Sector 4"), #""Sector 4""#), (.bytes([0, 1, 2]), #"{"bytes":"AAEC"}"#), (.bytes([]), #"{"bytes":""}"#),
            (.bytes([0xFF]), #"{"bytes":"/w=="}"#), (.bytes([0xFF, 0xEE]), #"{"bytes":"/+4="}"#),
            (.stringSet(["b", "a", "é", "Z"]), #"{"set":["Z","a","b","é"]}"#), (.stringSet([]), #"{"set":[]}"#),
        ]
        for (value, text) in cases {
            #expect(FieldValueCodec.encode(value).encodedText == text)
        }
    }

    @Test("base64 of every length 0 to 64 round-trips")
    func base64Lengths() throws {
        var generatorState: UInt64 = 7
        for length in 0...64 {
            let data = (0..<length).map { _ -> UInt8 in
                generatorState = generatorState &* 6364136223846793005 &+ 1442695040888963407
                return UInt8(truncatingIfNeeded: generatorState >> 33)
            }
            let json = FieldValueCodec.encode(.bytes(data))
            #expect(try FieldValueCodec.decode(try JSONValue(parsing: json.encoded()), at: "$") == .bytes(data))
        }
    }

    @Test("malformed field values fail with the path of the problem")
    func malformed() {
        let cases: [(String, WireError)] = [
            ("[1]", .wrongType(path: "$.v", expected: "a field value (arrays are written {\"array\": [...]}, sets {\"set\": [...]})")),
            ("{}", .invalidValue(path: "$.v", reason: Self.oneMember)),
            (#"{"bytes":"","set":[]}"#, .invalidValue(path: "$.v", reason: Self.oneMember)),
            (#"{"list":[]}"#, .unknownMember(path: "$.v.list")),
            (#"{"double":1.5}"#, .wrongType(path: "$.v.double", expected: "\"nan\", \"inf\" or \"-inf\"")),
            (#"{"double":"NaN"}"#, .invalidValue(path: "$.v.double", reason: "\"NaN\" is not nan, inf or -inf (finite doubles are plain numbers)")),
            (#"{"double":"2.5"}"#, .invalidValue(path: "$.v.double", reason: "\"2.5\" is not nan, inf or -inf (finite doubles are plain numbers)")),
            (#"{"bytes":5}"#, .wrongType(path: "$.v.bytes", expected: "a base64 string")),
            (#"{"bytes":"AAE"}"#, .invalidValue(path: "$.v.bytes", reason: "base64 of 3 characters (not a multiple of 4)")),
            (#"{"bytes":"AAF="}"#, .invalidValue(path: "$.v.bytes", reason: "base64 with non-zero unused bits")),
            (#"{"bytes":"AB=="}"#, .invalidValue(path: "$.v.bytes", reason: "base64 with non-zero unused bits")),
            (#"{"bytes":"A==="}"#, .invalidValue(path: "$.v.bytes", reason: "not base64 at character 1")),
            (#"{"bytes":"AA=A"}"#, .invalidValue(path: "$.v.bytes", reason: "not base64 at character 3")),
            (#"{"bytes":"AA==AAAA"}"#, .invalidValue(path: "$.v.bytes", reason: "not base64 at character 2")),
            (#"{"bytes":"AA AA"}"#, .invalidValue(path: "$.v.bytes", reason: "base64 of 5 characters (not a multiple of 4)")),
            (#"{"bytes":"AA-_"}"#, .invalidValue(path: "$.v.bytes", reason: "not base64 at character 2")),
            (#"{"set":"a"}"#, .wrongType(path: "$.v.set", expected: "an array of strings")),
            (#"{"set":["a",1]}"#, .wrongType(path: "$.v.set[1]", expected: "a string")),
            (#"{"set":["a","b","a"]}"#, .invalidValue(path: "$.v.set[2]", reason: "a repeated set element")),
            (#"{"set":["\u00e9","e\u0301"]}"#, .invalidValue(path: "$.v.set[1]", reason: "a repeated set element")),
        ]
        for (text, expected) in cases {
            #expect(wireError { try Self.decode(text) } == expected, "\(text)")
        }
    }

    static let oneMember = "an object field value has exactly one member: double, bytes, set, timestamp, uuid, array, object or attachment"

    @Test("timestamps, UUIDs, arrays and objects have the tagged wire forms PROTOCOL.md gives")
    func taggedForms() {
        let cases: [(FieldValue, String)] = [
            (.timestamp(-1), #"{"timestamp":-1}"#),
            (.uuid(UUID(uuidString: "CE56971C-DE35-4897-821E-FC0B1046C8BF")!), #"{"uuid":"ce56971c-de35-4897-821e-fc0b1046c8bf"}"#),
            (.array([.int(1), .string("a")]), #"{"array":[1,"a"]}"#),
            (.object(["b": .null, "a": .array([])]), #"{"object":{"a":{"array":[]},"b":null}}"#),
        ]
        for (value, text) in cases {
            #expect(FieldValueCodec.encode(value).encodedText == text)
        }
    }

    /// `inner` wrapped in `depth` arrays, as JSON text.
    static func nestedArrays(_ depth: Int) -> String {
        String(repeating: #"{"array":["#, count: depth) + "1" + String(repeating: "]}", count: depth)
    }

    @Test("arrays and objects nested 10 deep read; 11 deep is refused at the eleventh")
    func nestingLimit() throws {
        #expect(try Self.decode(Self.nestedArrays(10)).nestingDepth == 10)
        let eleventh = "$.v" + String(repeating: ".array[0]", count: 10) + ".array"
        #expect(wireError { try Self.decode(Self.nestedArrays(11)) } == .invalidValue(path: eleventh, reason: "arrays and objects nested more than 10 deep"))
        let objects = String(repeating: #"{"object":{"k":"#, count: 11) + "1" + String(repeating: "}}", count: 11)
        #expect(wireError { try Self.decode(objects) } != nil)
    }

    @Test("a field nested 10 deep fits in every message under the JSON nesting limit: push, push reply, pull page")
    func deepestFieldFitsEveryMessage() throws {
        let deepest = (0..<10).reduce(FieldValue.int(1)) { inner, level in level % 2 == 0 ? .object(["k": inner]) : .array([inner]) }
        let mutation = Mutation(operationID: operationID(1), kind: "pin", op: .create, recordID: "p1", fields: ["deep": deepest], baseUpdatedAt: nil)
        #expect(try PushRequestCodec.decode(PushRequestCodec.encode([mutation])) == [mutation])
        let row = ServerRow(kind: "pin", id: "p1", fields: ["deep": deepest], updatedAt: 5)
        let results = [MutationResult(operationID: operationID(1), outcome: .conflict(server: row))]
        #expect(try PushReplyCodec.decode(PushReplyCodec.encode(results)) == results)
        let page = PullPage(rows: [row], nextCursors: ["pin": PullCursor(updatedAt: 5, id: "p1")], hasMore: false)
        #expect(try PullPageCodec.decode(PullPageCodec.encode(page)) == page)
    }

    @Test("malformed timestamps, UUIDs, arrays and objects fail with the path of the problem")
    func malformedTaggedValues() {
        let cases: [(String, WireError)] = [
            (#"{"timestamp":1.5}"#, .wrongType(path: "$.v.timestamp", expected: "an integer (microseconds since 1970)")),
            (#"{"timestamp":"2025-01-01"}"#, .wrongType(path: "$.v.timestamp", expected: "an integer (microseconds since 1970)")),
            (#"{"uuid":"CE56971C-DE35-4897-821E-FC0B1046C8BF"}"#,
             .invalidValue(path: "$.v.uuid", reason: "\"CE56971C-DE35-4897-821E-FC0B1046C8BF\" is not a UUID in lowercase 8-4-4-4-12 hex")),
            (#"{"uuid":"nope"}"#, .invalidValue(path: "$.v.uuid", reason: "\"nope\" is not a UUID in lowercase 8-4-4-4-12 hex")),
            (#"{"uuid":5}"#, .wrongType(path: "$.v.uuid", expected: "a UUID string")),
            (#"{"array":{}}"#, .wrongType(path: "$.v.array", expected: "an array of field values")),
            (#"{"array":[1,{"set":[1]}]}"#, .wrongType(path: "$.v.array[1].set[0]", expected: "a string")),
            (#"{"object":[]}"#, .wrongType(path: "$.v.object", expected: "an object of fields")),
            (#"{"object":{"":1}}"#, .invalidValue(path: #"$.v.object[""]"#, reason: "an empty field name")),
        ]
        for (text, expected) in cases {
            #expect(wireError { try Self.decode(text) } == expected, "\(text)")
        }
    }

    @Test("an unsorted set is read (only writers sort)")
    func unsortedSetReads() throws {
        #expect(try Self.decode(#"{"set":["b","a"]}"#) == .stringSet(["a", "b"]))
    }

    @Test("field lists refuse an empty field name and keep the others")
    func fieldLists() throws {
        let json = try JSONValue(parsing: bytes(#"{"a":1,"b c":{"set":[]}}"#))
        #expect(try FieldValueCodec.decodeFields(json, at: "$.fields") == ["a": .int(1), "b c": .stringSet([])])
        let empty = try JSONValue(parsing: bytes(#"{"":1}"#))
        #expect(wireError { try FieldValueCodec.decodeFields(empty, at: "$.fields") } == .invalidValue(path: #"$.fields[""]"#, reason: "an empty field name"))
        #expect(wireError { try FieldValueCodec.decodeFields(.array([]), at: "$.fields") } == .wrongType(path: "$.fields", expected: "an object of fields"))
    }
}

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
            ("[1]", .wrongType(path: "$.v", expected: "a field value (arrays are written {\"set\": [...]})")),
            ("{}", .invalidValue(path: "$.v", reason: "an object field value has exactly one member: double, bytes or set")),
            (#"{"bytes":"","set":[]}"#, .invalidValue(path: "$.v", reason: "an object field value has exactly one member: double, bytes or set")),
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

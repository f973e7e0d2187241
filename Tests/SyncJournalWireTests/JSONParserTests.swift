import SyncJournalWire
import Testing

@Suite("JSON parser: strict RFC 8259")
struct JSONParserTests {
    static func parse(_ text: String) throws(WireError) -> JSONValue { try JSONValue(parsing: bytes(text)) }

    @Test("valid documents parse to the values they spell")
    func validDocuments() throws {
        #expect(try Self.parse("null") == .null)
        #expect(try Self.parse(" \t\r\n true \n") == .bool(true))
        #expect(try Self.parse("[]") == .array([]))
        #expect(try Self.parse("{}") == .object([:]))
        #expect(try Self.parse(#"{"a": [1, -2.5, "x", false, null, {"b": {}}]}"#)
            == .object(["a": .array([.integer(1), .number(-2.5), .string("x"), .bool(false), .null, .object(["b": .object([:])])])]))
        #expect(try Self.parse(#""\"\\\/\b\f\n\r\t\u0041\u00e9\ud834\udd1e""#) == .string("\"\\/\u{8}\u{C}\n\r\tAé𝄞"))
        #expect(try Self.parse("\"Café 𝄞\"") == .string("Café 𝄞"))
    }

    @Test("integer literals stay integers, exact to the Int64 edges; fractions and exponents are numbers")
    func integersAndNumbers() throws {
        #expect(try Self.parse("9223372036854775807") == .integer(.max))
        #expect(try Self.parse("-9223372036854775808") == .integer(.min))
        #expect(try Self.parse("-0") == .integer(0))
        #expect(try Self.parse("0") == .integer(0))
        #expect(try Self.parse("1.0") == .number(1))
        #expect(try Self.parse("1e2") == .number(100))
        #expect(try Self.parse("1E+2") == .number(100))
        #expect(try Self.parse("-0.0") == .number(-0.0))
        if case .number(let zero) = try Self.parse("-0.0") { #expect(zero.sign == .minus) }
        #expect(try Self.parse("9223372036854775808.0") == .number(9223372036854775808.0))
        #expect(try Self.parse("1e-400") == .number(0))
    }

    @Test("integers outside Int64 and numbers beyond a double are refused, not rounded")
    func outOfRange() {
        #expect(wireError { try Self.parse("9223372036854775808") } == .integerOutOfRange(offset: 0))
        #expect(wireError { try Self.parse("[-9223372036854775809]") } == .integerOutOfRange(offset: 1))
        #expect(wireError { try Self.parse("123456789012345678901234567890") } == .integerOutOfRange(offset: 0))
        #expect(wireError { try Self.parse("1e400") } == .numberOutOfRange(offset: 0))
        #expect(wireError { try Self.parse("-1.5e309") } == .numberOutOfRange(offset: 0))
    }

    @Test("malformed documents fail with a typed error at the right byte")
    func malformed() {
        let cases: [(String, WireError)] = [
            ("", .unexpectedEnd(offset: 0)),
            ("   ", .unexpectedEnd(offset: 3)),
            ("01", .syntax(reason: "a leading zero", offset: 0)),
            ("-01", .syntax(reason: "a leading zero", offset: 1)),
            ("+1", .syntax(reason: "not the start of a value", offset: 0)),
            (".5", .syntax(reason: "not the start of a value", offset: 0)),
            ("1.", .unexpectedEnd(offset: 2)),
            ("1.e5", .syntax(reason: "a fraction without digits", offset: 2)),
            ("1e", .unexpectedEnd(offset: 2)),
            ("1e+", .unexpectedEnd(offset: 3)),
            ("-", .unexpectedEnd(offset: 1)),
            ("-a", .syntax(reason: "a minus sign without digits", offset: 1)),
            ("NaN", .syntax(reason: "not the start of a value", offset: 0)),
            ("Infinity", .syntax(reason: "not the start of a value", offset: 0)),
            ("tru", .unexpectedEnd(offset: 3)),
            ("trux", .syntax(reason: "not a literal", offset: 0)),
            ("nul", .unexpectedEnd(offset: 3)),
            ("{} x", .syntax(reason: "characters after the value", offset: 3)),
            ("{}{}", .syntax(reason: "characters after the value", offset: 2)),
            ("1 2", .syntax(reason: "characters after the value", offset: 2)),
            ("[1,]", .syntax(reason: "not the start of a value", offset: 3)),
            ("[1 2]", .syntax(reason: "expected , or ] in an array", offset: 3)),
            (#"{"a":1,}"#, .syntax(reason: "expected a member name", offset: 7)),
            (#"{"a" 1}"#, .syntax(reason: "expected : after a member name", offset: 5)),
            (#"{a:1}"#, .syntax(reason: "expected a member name", offset: 1)),
            (#"{"a":1 "b":2}"#, .syntax(reason: "expected , or } in an object", offset: 7)),
            (#"{"a":1,"a":2}"#, .duplicateMember(name: "a", offset: 7)),
            (#"{"a":{"x":1,"y":2,"x":3}}"#, .duplicateMember(name: "x", offset: 18)),
            ("{\"\u{E9}\":1,\"e\u{301}\":2}", .duplicateMember(name: "e\u{301}", offset: 8)),
            (#"// c"#, .syntax(reason: "not the start of a value", offset: 0)),
            ("[1] // c", .syntax(reason: "characters after the value", offset: 4)),
            ("\"a\tb\"", .syntax(reason: "a control character in a string", offset: 2)),
            ("\"a\nb\"", .syntax(reason: "a control character in a string", offset: 2)),
            (#""\x""#, .syntax(reason: "an unknown escape", offset: 1)),
            (#""\u12g4""#, .syntax(reason: #"a \u escape needs four hex digits"#, offset: 5)),
            (#""\ud834""#, .loneSurrogate(offset: 1)),
            (#""\ud834x""#, .loneSurrogate(offset: 1)),
            (#""\ud834\u0041""#, .loneSurrogate(offset: 1)),
            (#""\udd1e""#, .loneSurrogate(offset: 1)),
            (#""abc"#, .unexpectedEnd(offset: 4)),
            ("'a'", .syntax(reason: "not the start of a value", offset: 0)),
        ]
        for (text, expected) in cases {
            #expect(wireError { try Self.parse(text) } == expected, "\(text)")
        }
    }

    @Test("invalid UTF-8 is refused: stray continuation, over-long, encoded surrogate, beyond U+10FFFF, truncated sequence, byte order mark")
    func invalidUTF8() throws {
        let quote = UInt8(ascii: "\"")
        let cases: [([UInt8], WireError)] = [
            ([quote, 0x80, quote], .invalidUTF8(offset: 1)),
            ([quote, 0xC0, 0xAF, quote], .invalidUTF8(offset: 1)),
            ([quote, 0xC1, 0xBF, quote], .invalidUTF8(offset: 1)),
            ([quote, 0xE0, 0x80, 0xAF, quote], .invalidUTF8(offset: 1)),
            ([quote, 0xED, 0xA0, 0x80, quote], .invalidUTF8(offset: 1)),
            ([quote, 0xF4, 0x90, 0x80, 0x80, quote], .invalidUTF8(offset: 1)),
            ([quote, 0xF5, 0x80, 0x80, 0x80, quote], .invalidUTF8(offset: 1)),
            ([quote, 0xFF, quote], .invalidUTF8(offset: 1)),
            ([quote, 0x61, 0xE2, 0x82, quote], .invalidUTF8(offset: 2)),
            ([quote, 0xE2, 0x82], .unexpectedEnd(offset: 3)),
            ([0xEF, 0xBB, 0xBF] + bytes("{}"), .syntax(reason: "not the start of a value", offset: 0)),
            ([0x7B, 0xC3, 0xA9, 0x7D], .syntax(reason: "expected a member name", offset: 1)),
        ]
        for (input, expected) in cases {
            #expect(wireError { try JSONValue(parsing: input) } == expected, "\(input)")
        }
        #expect(try JSONValue(parsing: [quote, 0xF4, 0x8F, 0xBF, 0xBF, quote]) == .string("\u{10FFFF}"))
        #expect(try JSONValue(parsing: [quote, 0xEF, 0xBF, 0xBF, quote]) == .string("\u{FFFF}"))
    }

    @Test("nesting beyond the depth limit fails without recursing further, even 100,000 levels deep")
    func depthLimit() throws {
        let parser = JSONParser(maximumDepth: 4)
        #expect(try parser.parse(bytes("[[[[1]]]]")) == .array([.array([.array([.array([.integer(1)])])])]))
        #expect(wireError { try parser.parse(bytes("[[[[[1]]]]]")) } == .tooDeep(limit: 4, offset: 4))
        #expect(wireError { try parser.parse(bytes(#"{"a":{"b":{"c":{"d":{}}}}}"#)) } == .tooDeep(limit: 4, offset: 20))
        let deep = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        #expect(wireError { try JSONValue(parsing: deep) } == .tooDeep(limit: JSONParser.defaultMaximumDepth, offset: JSONParser.defaultMaximumDepth))
        let deepObjects = Array(String(repeating: #"{"a":"#, count: 100_000).utf8)
        #expect(wireError { try JSONValue(parsing: deepObjects) }?.errorCode == .badJSON)
    }

    @Test("a body longer than the size limit is refused before parsing")
    func sizeLimit() throws {
        let parser = JSONParser(maximumByteCount: 8)
        #expect(try parser.parse(bytes("[1,2,3]")) == .array([.integer(1), .integer(2), .integer(3)]))
        #expect(wireError { try parser.parse(bytes("[1,2,3,4]")) } == .tooLarge(byteCount: 9, limit: 8))
        #expect(WireError.tooLarge(byteCount: 9, limit: 8).errorCode == .tooLarge)
    }

    @Test("any collection of bytes parses, slices included")
    func collections() throws {
        let text = bytes("xx[1]yy")
        #expect(try JSONValue(parsing: text[2..<5]) == .array([.integer(1)]))
        #expect(try JSONValue(parsing: "{\"a\":true}".utf8) == .object(["a": .bool(true)]))
    }

    @Test("long strings and many members parse in linear time")
    func largeInputs() throws {
        let long = String(repeating: "é", count: 200_000)
        #expect(try JSONValue(parsing: bytes("\"\(long)\"")) == .string(long))
        let escaped = String(repeating: #"\n"#, count: 100_000)
        #expect(try JSONValue(parsing: bytes("\"\(escaped)\"")) == .string(String(repeating: "\n", count: 100_000)))
        let members = (0..<20_000).map { #""m\#($0)":\#($0)"# }.joined(separator: ",")
        guard case .object(let object) = try JSONValue(parsing: bytes("{\(members)}")) else { Issue.record("not an object"); return }
        #expect(object.count == 20_000)
    }
}

import SyncJournalWire
import Testing

@Suite("JSON writer: byte-stable output")
struct JSONWriterTests {
    @Test("members are written sorted by the UTF-8 bytes of their names, without whitespace")
    func sortedMembers() {
        let value = JSONValue.object(["b": .integer(1), "a": .array([.null, .bool(true)]), "Z": .object(["é": .string("x"), "e": .string("y")])])
        #expect(value.encodedText == #"{"Z":{"e":"y","é":"x"},"a":[null,true],"b":1}"#)
        #expect(value.encoded() == value.encoded())
    }

    @Test("doubles always carry a fraction or an exponent and read back to the same bits")
    func doubles() throws {
        #expect(JSONValue.number(1).encodedText == "1.0")
        #expect(JSONValue.number(-0.0).encodedText == "-0.0")
        #expect(JSONValue.number(1e300).encodedText == "1e+300")
        #expect(JSONValue.number(1e16).encodedText == "1e+16")
        #expect(JSONValue.number(2.5).encodedText == "2.5")
        #expect(JSONValue.number(.nan).encodedText == "null")
        #expect(JSONValue.number(-.infinity).encodedText == "null")
        let samples: [Double] = [0, -0.0, 1, -1, 0.1, 1.0 / 3.0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
                                 .leastNormalMagnitude, 9_007_199_254_740_994, .ulpOfOne, 0.1 + 0.2, 123456789.123456789, 1e-7, 1e21, 1e22]
        for sample in samples {
            let text = JSONValue.number(sample).encodedText
            #expect(text.contains(".") || text.contains("e"), "\(text)")
            guard case .number(let back) = try JSONValue(parsing: bytes(text)) else { Issue.record("\(text) is not a number"); continue }
            #expect(back.bitPattern == sample.bitPattern, "\(text)")
        }
    }

    @Test("strings escape quotes, backslashes and control characters and keep other text as UTF-8")
    func strings() throws {
        let text = "a\"b\\c\n\r\t\u{8}\u{C}\u{0}\u{1F}/é𝄞\u{7F}"
        let encoded = JSONValue.string(text).encodedText
        #expect(encoded == #""a\"b\\c\n\r\t\b\f\u0000\u001f/é𝄞"# + "\u{7F}\"")
        #expect(try JSONValue(parsing: bytes(encoded)) == .string(text))
    }

    @Test("integers are written exactly, Int64 edges included, and parse back as integers")
    func integers() throws {
        for value: Int64 in [.min, .max, 0, -1, 1] {
            let text = JSONValue.integer(value).encodedText
            #expect(text == String(value))
            #expect(try JSONValue(parsing: bytes(text)) == .integer(value))
        }
    }
}

import Testing
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting

/// Every field type survives `JournalOperation` encode/decode unchanged.
@Suite("Field values round-trip through an operation")
struct FieldValueRoundTripTests {
    /// Encodes `value` as the only field of a create and decodes it again.
    private func roundTrip(_ value: FieldValue, name: String = "f") throws -> FieldValue? {
        let operation = JournalOperation(id: fixedID, kind: .create, entity: "pin", recordID: "p1",
                                         fields: [name: value], queuedAt: 1)
        let decoded = try JournalOperation.decode(operation.encoded())
        #expect(decoded == operation)
        #expect(decoded.fields.count == 1)
        return decoded.fields[name]
    }

    @Test("null round-trips")
    func nullRoundTrips() throws {
        #expect(try roundTrip(.null) == .null)
    }

    @Test("bool false and true round-trip", arguments: [false, true])
    func boolRoundTrips(value: Bool) throws {
        #expect(try roundTrip(.bool(value)) == .bool(value))
    }

    static let int64Edges: [Int64] = [0, 1, -1, 63, -64, 64, -65, 8191, -8192, 1 << 62, -(1 << 62),
                                      .min, .max, .min + 1, .max - 1]

    @Test("int64 edge values round-trip", arguments: int64Edges)
    func int64EdgeValuesRoundTrip(value: Int64) throws {
        #expect(try roundTrip(.int(value)) == .int(value))
    }

    @Test("random int64 values round-trip")
    func randomInt64ValuesRoundTrip() throws {
        var rng = SeededGenerator(seed: 0x1A7)
        for _ in 0..<500 {
            let value = Int64(bitPattern: rng.next()) >> UInt64.random(in: 0...63, using: &rng)
            #expect(try roundTrip(.int(value)) == .int(value))
        }
    }

    /// Bit patterns rather than `Double`s, so no NaN payload is touched by floating-point moves on the way.
    static let doubleEdges: [UInt64] = [
        0x0000_0000_0000_0000, // 0.0
        0x8000_0000_0000_0000, // -0.0
        0x3FF0_0000_0000_0000, // 1.0
        0xBFF8_0000_0000_0000, // -1.5
        0x7FF8_0000_0000_0000, // quiet NaN
        0xFFF8_0000_0000_0000, // negative quiet NaN
        0x7FF4_0000_0000_0000, // signaling NaN
        0x7FF0_0000_0000_0001, // signaling NaN, smallest payload
        0xFFF8_DEAD_BEEF_0001, // NaN with payload
        0x7FF0_0000_0000_0000, // +infinity
        0xFFF0_0000_0000_0000, // -infinity
        0x0000_0000_0000_0001, // smallest subnormal
        0x8000_0000_0000_0001, // negative smallest subnormal
        0x000F_FFFF_FFFF_FFFF, // largest subnormal
        0x0010_0000_0000_0000, // smallest normal
        0x7FEF_FFFF_FFFF_FFFF, // greatest finite
        0xFFEF_FFFF_FFFF_FFFF, // most negative finite
        0x4009_21FB_5444_2D18, // pi
    ]

    @Test("double special values round-trip bit for bit: ±0, NaNs with payloads, ±infinity, subnormals, extremes",
          arguments: doubleEdges)
    func doubleSpecialValuesRoundTrip(bits: UInt64) throws {
        let value = Double(bitPattern: bits)
        #expect(value.bitPattern == bits)
        let decoded = try roundTrip(.double(value))
        guard case .double(let back)? = decoded else {
            Issue.record("decoded \(String(describing: decoded)) instead of a double")
            return
        }
        #expect(back.bitPattern == bits)
    }

    @Test("0.0 and -0.0 stay distinct, NaN equals itself (values compare by bit pattern)")
    func doublesCompareByBitPattern() throws {
        #expect(FieldValue.double(0.0) != FieldValue.double(-0.0))
        #expect(FieldValue.double(.nan) == FieldValue.double(.nan))
        #expect(try roundTrip(.double(-0.0)) != .double(0.0))
        #expect(try roundTrip(.double(.nan)) == .double(.nan))
    }

    @Test("random double bit patterns round-trip")
    func randomDoublesRoundTrip() throws {
        var rng = SeededGenerator(seed: 0xD0B1E)
        for _ in 0..<500 {
            let value = Double(bitPattern: rng.next())
            guard case .double(let back)? = try roundTrip(.double(value)) else {
                Issue.record("not a double")
                return
            }
            #expect(back.bitPattern == value.bitPattern)
        }
    }

    static let strings: [String] = ["", "hello, world", "Grüße aus Zürich", "日本語のテキスト", "Ωμέγα",
                                    "😀🎉👨‍👩‍👧‍👦🇫🇷", "a\u{0}b", "e\u{301}", String(repeating: "x", count: 300),
                                    String(repeating: "€", count: 1000)]

    @Test("strings round-trip: empty, ASCII, multi-byte UTF-8, emoji, NUL, long", arguments: strings)
    func stringsRoundTrip(value: String) throws {
        let decoded = try roundTrip(.string(value))
        #expect(decoded == .string(value))
        guard case .string(let back)? = decoded else { return }
        #expect(Array(back.utf8) == Array(value.utf8), "string bytes must be preserved, not normalized")
    }

    @Test("bytes round-trip: empty, all byte values, random, long")
    func bytesRoundTrip() throws {
        #expect(try roundTrip(.bytes([])) == .bytes([]))
        let every = (0...255).map { UInt8($0) }
        #expect(try roundTrip(.bytes(every)) == .bytes(every))
        var rng = SeededGenerator(seed: 0xB17E5)
        for count in [1, 2, 127, 128, 129, 16_384, 20_000] {
            let random = randomBytes(count: count, using: &rng)
            #expect(try roundTrip(.bytes(random)) == .bytes(random))
        }
    }

    static let sets: [Set<String>] = [[], ["only"], [""], ["", "a"], Set((0..<200).map { "element-\($0)" }),
                                      ["z", "a", "é", "日本", "😀", "Z", "ß", "e\u{301}f"]]

    @Test("string sets round-trip: empty, one, many, unicode, empty-string element", arguments: sets)
    func stringSetsRoundTrip(value: Set<String>) throws {
        #expect(try roundTrip(.stringSet(value)) == .stringSet(value))
    }

    static let names: [String] = ["é", "日本", "😀", "a b", String(repeating: "n", count: 200)]

    @Test("field names with unicode round-trip", arguments: names)
    func unicodeFieldNamesRoundTrip(name: String) throws {
        #expect(try roundTrip(.int(42), name: name) == .int(42))
    }

    @Test("every field type together in one operation round-trips")
    func allTypesTogetherRoundTrip() throws {
        let fields: [String: FieldValue] = [
            "null": .null, "false": .bool(false), "true": .bool(true), "int": .int(.min), "double": .double(.nan),
            "string": .string("😀"), "bytes": .bytes([0, 255]), "set": .stringSet(["b", "a"]),
        ]
        let operation = JournalOperation(id: fixedID, kind: .create, entity: "pin", recordID: "p1", fields: fields,
                                         baseUpdatedAt: 9, queuedAt: 10)
        #expect(try JournalOperation.decode(operation.encoded()) == operation)
    }

    @Test("each value's tag and type name match the spec table")
    func tagsMatchSpec() {
        let expected: [(FieldValue, UInt8, String)] = [
            (.null, 0, "null"), (.bool(false), 1, "bool"), (.bool(true), 2, "bool"), (.int(0), 3, "int64"),
            (.double(0), 4, "double"), (.string(""), 5, "string"), (.bytes([]), 6, "bytes"), (.stringSet([]), 7, "set"),
        ]
        for (value, tag, name) in expected {
            #expect(value.tag == tag)
            #expect(value.typeName == name)
        }
    }
}

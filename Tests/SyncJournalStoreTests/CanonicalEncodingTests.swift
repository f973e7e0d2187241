import Testing
import SyncJournalCore
import SyncJournalFieldCodec
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting

@Suite("Encoding is canonical and matches FORMAT.md byte for byte")
struct CanonicalEncodingTests {
    // MARK: Exact layouts, computed by hand from journals/FORMAT.md section 4

    @Test("a delete of pin/p1 with base 5 and queuedAt 7 has exactly the bytes the spec gives")
    func deleteLayoutMatchesSpec() throws {
        let operation = JournalOperation(id: fixedID, kind: .delete, entity: "pin", recordID: "p1",
                                         baseUpdatedAt: 5, queuedAt: 7)
        let expected: [UInt8] = [
            0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, // uuid
            0x03,                   // op: delete
            0x03, 0x70, 0x69, 0x6E, // kind "pin"
            0x02, 0x70, 0x31,       // record id "p1"
            0x01,                   // presence: baseUpdatedAt follows
            0x0A,                   // zigzag(5) = 10
            0x0E,                   // zigzag(7) = 14
            0x00,                   // field list: 0 fields
        ]
        #expect(operation.encoded() == expected)
        #expect(try JournalOperation.decode(expected) == operation)
    }

    @Test("a create with one field of every type, no base and queuedAt -1 has exactly the bytes the spec gives")
    func createLayoutMatchesSpec() throws {
        let operation = JournalOperation(id: fixedID, kind: .create, entity: "e", recordID: "r",
                                         fields: ["h": .bool(false), "g": .bool(true), "f": .null, "e": .bytes([1, 2]),
                                                  "d": .stringSet(["b", "a"]), "c": .double(1.0), "b": .string("x"),
                                                  "a": .int(-1)],
                                         queuedAt: -1)
        let expected: [UInt8] = fixedIDBytes + [
            0x01,             // op: create
            0x01, 0x65,       // kind "e"
            0x01, 0x72,       // record id "r"
            0x00,             // presence: no base
            0x01,             // zigzag(-1) = 1
            0x08,             // 8 fields, by ascending name
            0x01, 0x61, 0x03, 0x01,                                             // "a": int64 zigzag(-1)
            0x01, 0x62, 0x05, 0x01, 0x78,                                       // "b": string "x"
            0x01, 0x63, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF0, 0x3F,   // "c": double 1.0 little-endian
            0x01, 0x64, 0x07, 0x02, 0x01, 0x61, 0x01, 0x62,                     // "d": set {"a", "b"} sorted
            0x01, 0x65, 0x06, 0x02, 0x01, 0x02,                                 // "e": bytes [1, 2]
            0x01, 0x66, 0x00,                                                   // "f": null
            0x01, 0x67, 0x02,                                                   // "g": true
            0x01, 0x68, 0x01,                                                   // "h": false
        ]
        #expect(operation.encoded() == expected)
        #expect(try JournalOperation.decode(expected) == operation)
    }

    @Test("multi-byte varints and zigzag in an operation: base 300, queuedAt -300, a 200-byte kind")
    func multiByteVarintLayout() {
        let kind = String(repeating: "k", count: 200)
        let operation = JournalOperation(id: fixedID, kind: .update, entity: kind, recordID: "p1",
                                         baseUpdatedAt: 300, queuedAt: -300)
        let expected: [UInt8] = fixedIDBytes + [0x02, 0xC8, 0x01] + Array(kind.utf8)
            + [0x02, 0x70, 0x31, 0x01, 0xD8, 0x04, 0xD7, 0x04, 0x00]
        #expect(operation.encoded() == expected)
    }

    @Test("a batch payload is a varint count then the operations back to back")
    func batchLayout() {
        let operations = (0..<130).map {
            JournalOperation(id: fixedID, kind: .delete, entity: "pin", recordID: "p\($0)", queuedAt: Int64($0))
        }
        let payload = JournalOperation.encodeBatch(operations)
        #expect(Array(payload.prefix(2)) == [0x82, 0x01]) // 130
        #expect(Array(payload.dropFirst(2)) == operations.flatMap { $0.encoded() })
    }

    // MARK: Canonical order

    @Test("the same fields inserted in different dictionary orders encode to identical bytes")
    func fieldInsertionOrderDoesNotMatter() {
        var rng = SeededGenerator(seed: 0xCA40)
        for _ in 0..<50 {
            let pairs = Array(randomFields(count: 2...12, using: &rng))
            var reference: [String: FieldValue] = [:]
            for (name, value) in pairs { reference[name] = value }
            let expected = encodedCreate(reference)
            for _ in 0..<5 {
                // A fresh dictionary with a different capacity and insertion order has a different internal order.
                var shuffled = [String: FieldValue](minimumCapacity: Int.random(in: 0...64, using: &rng))
                for (name, value) in pairs.shuffled(using: &rng) { shuffled[name] = value }
                #expect(encodedCreate(shuffled) == expected)
            }
        }
    }

    @Test("the same set elements inserted in different orders encode to identical bytes")
    func setInsertionOrderDoesNotMatter() {
        let elements = (0..<40).map { "item \($0) é😀" }
        var rng = SeededGenerator(seed: 0x5E7)
        let expected = encodedCreate(["s": .stringSet(Set(elements))])
        for _ in 0..<10 {
            var set = Set<String>(minimumCapacity: Int.random(in: 0...100, using: &rng))
            for element in elements.shuffled(using: &rng) { set.insert(element) }
            #expect(encodedCreate(["s": .stringSet(set)]) == expected)
        }
    }

    /// Reads back the names of the fields of `bytes` in stored order (a create without base, as `encodedCreate` writes).
    private func storedFieldNames(_ bytes: [UInt8]) throws -> [[UInt8]] {
        var reader = ByteReader(Array(bytes.dropFirst(fixedIDBytes.count + 1)))
        _ = try reader.readBytes() // kind
        _ = try reader.readBytes() // record id
        _ = try reader.readUInt8() // presence
        _ = try reader.readZigzag() // queuedAt
        var names: [[UInt8]] = []
        for _ in 0..<(try reader.readVarint()) {
            names.append(try reader.readBytes())
            _ = try FieldValue.decode(from: &reader)
        }
        try reader.expectEnd()
        return names
    }

    @Test("field names are stored in ascending UTF-8 byte order, not Swift String order")
    func fieldNamesSortedByUTF8Bytes() throws {
        // Swift orders "e\u{301}" (NFD é) after "f"; by UTF-8 bytes 65 CC 81 comes before 66.
        // "Z" < "a" < "z" < "è" < "日" < "😀" by bytes.
        let names = ["😀", "z", "f", "e\u{301}", "日", "è", "a", "Z", "aa", "a\u{0}"]
        let fields = Dictionary(uniqueKeysWithValues: names.map { ($0, FieldValue.null) })
        let stored = try storedFieldNames(encodedCreate(fields))
        let expected = names.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(stored == expected)
        #expect(stored.map { String(decoding: $0, as: UTF8.self) }
            == ["Z", "a", "a\u{0}", "aa", "e\u{301}", "f", "z", "è", "日", "😀"])
    }

    @Test("set elements are stored in ascending UTF-8 byte order, not Swift String order")
    func setElementsSortedByUTF8Bytes() throws {
        let elements: Set<String> = ["😀", "z", "f", "e\u{301}", "日", "è", "a", "Z", "", "aa", "\u{FFFD}", "\u{10000}"]
        var writer = ByteWriter()
        FieldValue.stringSet(elements).encode(into: &writer)
        var reader = ByteReader(writer.bytes)
        #expect(try reader.readUInt8() == 7)
        let count = try reader.readVarint()
        #expect(count == UInt64(elements.count))
        var stored: [[UInt8]] = []
        for _ in 0..<count { stored.append(try reader.readBytes()) }
        try reader.expectEnd()
        #expect(stored == elements.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(stored.map { String(decoding: $0, as: UTF8.self) }
            == ["", "Z", "a", "aa", "e\u{301}", "f", "z", "è", "日", "\u{FFFD}", "\u{10000}", "😀"])
        // And the decoder accepts this order back.
        var back = ByteReader(writer.bytes)
        #expect(try FieldValue.decode(from: &back) == .stringSet(elements))
    }

    @Test("re-encoding a decoded operation reproduces the original bytes")
    func reEncodingIsByteIdentical() throws {
        var rng = SeededGenerator(seed: 0xB17E)
        for _ in 0..<500 {
            let bytes = randomOperation(using: &rng).encoded()
            #expect(try JournalOperation.decode(bytes).encoded() == bytes)
        }
    }
}

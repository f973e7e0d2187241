import Foundation
import SyncJournalCore
import SyncJournalFieldCodec
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import Testing

/// An edit's size is counted, not encoded, before it is journaled: the count
/// must be the encoding's length exactly, or an edit the record limit refuses
/// would be queued (or one it allows refused).
@Suite("Encoded lengths are counted without encoding")
struct EncodedLengthTests {
    @Test("a varint's and a zigzag's counted length is the written length at every byte boundary")
    func varintBoundaries() {
        var values: [UInt64] = [0, .max]
        for shift in 0..<64 { values += [1 << UInt64(shift), (1 << UInt64(shift)) - 1, (1 << UInt64(shift)) + 1] }
        for value in values {
            var writer = ByteWriter()
            writer.writeVarint(value)
            #expect(EncodedLength.varint(value) == writer.bytes.count, "varint \(value)")
            let signed = Int64(bitPattern: value)
            for candidate in [signed, 0 &- signed, signed &- 1] {
                var zigzag = ByteWriter()
                zigzag.writeZigzag(candidate)
                #expect(EncodedLength.zigzag(candidate) == zigzag.bytes.count, "zigzag \(candidate)")
            }
        }
    }

    @Test("every kind of field value, nested ones included, counts as many bytes as it encodes to")
    func fieldValues() {
        var rng = SeededGenerator(seed: 0x1E46)
        for _ in 0..<2_000 {
            let value = Self.nestedValue(depth: 3, using: &rng)
            var writer = ByteWriter()
            value.encode(into: &writer)
            #expect(value.encodedLength == writer.bytes.count, "\(value)")
        }
    }

    @Test("an edit with its compaction steps counts as many bytes as its record payload")
    func editsWithCompaction() {
        var rng = SeededGenerator(seed: 0xED17)
        for _ in 0..<1_000 {
            var operation = randomOperation(using: &rng)
            operation.fields = operation.kind == .delete ? [:] : Self.nestedFields(using: &rng)
            if Bool.random(using: &rng) { operation.modelVersion = Int.random(in: 1...ProtocolLimits.maximumModelVersion, using: &rng) }
            let steps: [CompactionStep] = (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                Bool.random(using: &rng) ? .remove(.random(using: &rng)) : .replace(.random(using: &rng), with: randomOperation(using: &rng))
            }
            #expect(StoreEvent.editPayloadLength(operation, compaction: steps)
                    == StoreEvent.edit(operation, compaction: steps).encodedPayload().count)
        }
    }

    static func nestedFields<G: RandomNumberGenerator>(using rng: inout G) -> [String: FieldValue] {
        var fields: [String: FieldValue] = [:]
        for _ in 0..<Int.random(in: 0...5, using: &rng) {
            fields[randomString(length: 1...8, using: &rng)] = nestedValue(depth: 2, using: &rng)
        }
        return fields
    }

    /// Any value, arrays and objects `depth` deep, timestamps and UUIDs included.
    static func nestedValue<G: RandomNumberGenerator>(depth: Int, using rng: inout G) -> FieldValue {
        switch Int.random(in: 0..<(depth > 0 ? 5 : 3), using: &rng) {
        case 0: return randomFieldValue(using: &rng)
        case 1: return .timestamp(randomInt64(using: &rng))
        case 2:
            if Bool.random(using: &rng) { return .uuid(UUID()) }
            return .attachment(Attachment(content: ContentHash(bytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) })!,
                                          size: Int64.random(in: 0...Int64.max, using: &rng), mediaType: "application/pdf"))
        case 3: return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in nestedValue(depth: depth - 1, using: &rng) })
        default:
            var members: [String: FieldValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                members[randomString(length: 1...6, using: &rng)] = nestedValue(depth: depth - 1, using: &rng)
            }
            return .object(members)
        }
    }
}

import SyncJournalProtocol
import SyncJournalTesting
import Testing
import SyncJournalCore

@Suite("Varint and zigzag primitives (ByteWriter / ByteReader)")
struct VarintTests {
    private func varint(_ value: UInt64) -> [UInt8] {
        var writer = ByteWriter()
        writer.writeVarint(value)
        return writer.bytes
    }

    private func zigzag(_ value: Int64) -> [UInt8] {
        var writer = ByteWriter()
        writer.writeZigzag(value)
        return writer.bytes
    }

    private func readVarint(_ bytes: [UInt8]) throws(ByteReader.Failure) -> UInt64 {
        var reader = ByteReader(bytes)
        let value = try reader.readVarint()
        try reader.expectEnd()
        return value
    }

    private func readZigzag(_ bytes: [UInt8]) throws(ByteReader.Failure) -> Int64 {
        var reader = ByteReader(bytes)
        let value = try reader.readZigzag()
        try reader.expectEnd()
        return value
    }

    static let varintCases: [(UInt64, [UInt8])] = [
        (0, [0x00]),
        (1, [0x01]),
        (127, [0x7F]),
        (128, [0x80, 0x01]),
        (300, [0xAC, 0x02]),
        (16_383, [0xFF, 0x7F]),
        (16_384, [0x80, 0x80, 0x01]),
        (UInt64(UInt32.max), [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
        (1 << 63, [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
        (UInt64.max, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
    ]

    @Test("varints encode to the expected LEB128 bytes and decode back", arguments: varintCases)
    func varintEncodesAndDecodes(value: UInt64, bytes: [UInt8]) throws {
        #expect(varint(value) == bytes)
        #expect(try readVarint(bytes) == value)
    }

    static let zigzagCases: [(Int64, [UInt8])] = [
        (0, [0x00]),
        (-1, [0x01]),
        (1, [0x02]),
        (-2, [0x03]),
        (63, [0x7E]),
        (-64, [0x7F]),
        (64, [0x80, 0x01]),
        (.max, [0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]), // 2^64 - 2
        (.min, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]), // 2^64 - 1
    ]

    @Test("zigzag maps signed values to the expected varints and back, including Int64.min and Int64.max",
          arguments: zigzagCases)
    func zigzagEncodesAndDecodes(value: Int64, bytes: [UInt8]) throws {
        #expect(zigzag(value) == bytes)
        #expect(try readZigzag(bytes) == value)
    }

    @Test("random varints and zigzags round-trip and use the minimal number of bytes")
    func randomValuesRoundTrip() throws {
        var rng = SeededGenerator(seed: 0x7A81)
        for _ in 0..<5_000 {
            let raw = rng.next() >> UInt64.random(in: 0...63, using: &rng)
            let encoded = varint(raw)
            #expect(try readVarint(encoded) == raw)
            let significantBits = max(1, 64 - raw.leadingZeroBitCount)
            #expect(encoded.count == (significantBits + 6) / 7)
            let signed = Int64(bitPattern: rng.next()) >> UInt64.random(in: 0...63, using: &rng)
            #expect(try readZigzag(zigzag(signed)) == signed)
        }
    }

    @Test("an 11-byte varint throws varintOverflow at its start")
    func elevenByteVarintOverflows() {
        let bytes: [UInt8] = [UInt8](repeating: 0x80, count: 10) + [0x00]
        #expect(throws: ByteReader.Failure.varintOverflow(at: 0)) { try readVarint(bytes) }
        let ones: [UInt8] = [UInt8](repeating: 0xFF, count: 10) + [0x01]
        #expect(throws: ByteReader.Failure.varintOverflow(at: 0)) { try readVarint(ones) }
        // After a prefix, the position is that of the varint's first byte.
        var reader = ByteReader([0xAA, 0xBB] + ones)
        _ = try? reader.readUInt16()
        #expect(throws: ByteReader.Failure.varintOverflow(at: 2)) { try reader.readVarint() }
    }

    @Test("a 10-byte varint whose last byte is greater than 1 throws varintOverflow", arguments: [UInt8(0x02), 0x03, 0x7F])
    func tenByteVarintWithLargeLastByteOverflows(last: UInt8) {
        let bytes: [UInt8] = [UInt8](repeating: 0xFF, count: 9) + [last]
        #expect(throws: ByteReader.Failure.varintOverflow(at: 0)) { try readVarint(bytes) }
    }

    @Test("a varint cut before its last byte throws truncated at the end of the buffer")
    func truncatedVarintThrows() {
        #expect(throws: ByteReader.Failure.truncated(at: 0)) { try readVarint([]) }
        #expect(throws: ByteReader.Failure.truncated(at: 1)) { try readVarint([0x80]) }
        #expect(throws: ByteReader.Failure.truncated(at: 9)) { try readVarint([UInt8](repeating: 0xFF, count: 9)) }
    }

    /// FORMAT.md section 4: a varint has "no redundant trailing zero groups beyond what the value needs",
    /// so every value has exactly one encoding.
    @Test("a varint with redundant trailing zero groups (non-minimal encoding) is refused at its start",
          arguments: [[UInt8]([0x80, 0x00]), [0xFF, 0x00], [0x81, 0x80, 0x00],
                      [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]])
    func nonMinimalVarintIsRefused(bytes: [UInt8]) {
        var reader = ByteReader(bytes)
        do throws(ByteReader.Failure) {
            let value = try reader.readVarint()
            Issue.record("non-minimal varint \(bytes) decoded to \(value)")
        } catch {
            switch error {
            case .invalid(_, let at), .varintOverflow(let at): #expect(at == 0)
            default: Issue.record("unexpected failure \(error)")
            }
        }
    }

    @Test("a non-minimal varint inside an operation is refused, so the encoding stays canonical")
    func nonMinimalVarintInOperationIsRefused() {
        // delete pin/p1 without base; queuedAt 7 (zigzag 0E) written as 8E 00.
        let bytes = operationPrefix() + [0x8E, 0x00, 0x00]
        #expect(operationFailure(bytes) != nil)
        // A field count of 0 written as 80 00.
        #expect(operationFailure(operationPrefix() + [0x0E, 0x80, 0x00]) != nil)
    }

    @Test("fixed-width integers are little-endian")
    func fixedWidthIntegersAreLittleEndian() throws {
        var writer = ByteWriter()
        writer.writeUInt16(0x0102)
        writer.writeUInt32(0x0304_0506)
        writer.writeUInt64(0x0708_090A_0B0C_0D0E)
        writer.writeInt64(-2)
        #expect(writer.bytes == [0x02, 0x01, 0x06, 0x05, 0x04, 0x03, 0x0E, 0x0D, 0x0C, 0x0B, 0x0A, 0x09, 0x08, 0x07,
                                 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        var reader = ByteReader(writer.bytes)
        #expect(try reader.readUInt16() == 0x0102)
        #expect(try reader.readUInt32() == 0x0304_0506)
        #expect(try reader.readUInt64() == 0x0708_090A_0B0C_0D0E)
        #expect(try reader.readInt64() == -2)
        #expect(reader.isAtEnd)
        #expect(throws: ByteReader.Failure.truncated(at: 22)) { try reader.readUInt8() }
    }

    @Test("readCount refuses a count larger than the remaining bytes without allocating")
    func readCountRefusesHugeCounts() throws {
        var writer = ByteWriter()
        writer.writeVarint(UInt64.max)
        var reader = ByteReader(writer.bytes + [1, 2, 3])
        #expect(throws: ByteReader.Failure.self) { try reader.readCount() }
        var fits = ByteReader([0x03, 1, 2, 3])
        #expect(try fits.readCount() == 3)
        var tooMany = ByteReader([0x04, 1, 2, 3])
        #expect(throws: ByteReader.Failure.self) { try tooMany.readCount() }
        var wide = ByteReader([0x02, 1, 2, 3])
        #expect(throws: ByteReader.Failure.self) { try wide.readCount(minimumItemSize: 2) }
        var zero = ByteReader([0x00])
        #expect(try zero.readCount(minimumItemSize: 22) == 0)
        // A huge byte-string length throws instead of allocating.
        var huge = ByteReader([0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x41])
        #expect(throws: ByteReader.Failure.self) { try huge.readBytes() }
    }

    @Test("readRaw refuses negative and oversized counts")
    func readRawRefusesBadCounts() {
        var reader = ByteReader([1, 2, 3])
        #expect(throws: ByteReader.Failure.truncated(at: 0)) { try reader.readRaw(-1) }
        #expect(throws: ByteReader.Failure.truncated(at: 0)) { try reader.readRaw(4) }
        #expect(throws: ByteReader.Failure.truncated(at: 0)) { try reader.readRaw(Int.max) }
    }

    @Test("ByteReader over an array slice reads from the slice's first element")
    func sliceReaderStartsAtSliceStart() throws {
        let bytes: [UInt8] = [9, 9, 0x05, 0x02]
        var reader = ByteReader(bytes[2...])
        #expect(reader.position == 0)
        #expect(try reader.readUInt8() == 0x05)
        #expect(reader.remaining == 1)
    }
}

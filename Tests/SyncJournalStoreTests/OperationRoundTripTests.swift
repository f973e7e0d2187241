import SyncJournalProtocol
import Testing
import SyncJournalCore
import SyncJournalStore
import SyncJournalTesting

@Suite("Operations, batches and journal entries round-trip")
struct OperationRoundTripTests {
    static let bases: [Int64?] = [nil, 0, 1, -1, -1_735_689_600_000, 1_735_689_600_000, .min, .max]

    @Test("create with all fields round-trips, with and without baseUpdatedAt", arguments: bases)
    func createRoundTrips(base: Int64?) throws {
        let operation = JournalOperation(id: .random(), kind: .create, entity: "pin", recordID: "p1",
                                         fields: ["name": .string("Museum"), "rating": .int(5), "tags": .stringSet(["art", "free"]),
                                                  "lat": .double(52.52), "photo": .bytes([1, 2, 3]), "note": .null, "visited": .bool(true)],
                                         baseUpdatedAt: base, queuedAt: 1_735_689_700_000)
        let decoded = try JournalOperation.decode(operation.encoded())
        #expect(decoded == operation)
        #expect(decoded.baseUpdatedAt == base)
    }

    @Test("update with changed fields round-trips, with and without baseUpdatedAt", arguments: bases)
    func updateRoundTrips(base: Int64?) throws {
        let operation = JournalOperation(id: .random(), kind: .update, entity: "pin", recordID: "p1",
                                         fields: ["name": .string("Museum of Art")], baseUpdatedAt: base, queuedAt: -5)
        #expect(try JournalOperation.decode(operation.encoded()) == operation)
    }

    @Test("delete with no fields round-trips, with and without baseUpdatedAt", arguments: bases)
    func deleteRoundTrips(base: Int64?) throws {
        let operation = JournalOperation(id: .random(), kind: .delete, entity: "pin", recordID: "p1",
                                         baseUpdatedAt: base, queuedAt: .max)
        let decoded = try JournalOperation.decode(operation.encoded())
        #expect(decoded == operation)
        #expect(decoded.fields.isEmpty)
    }

    @Test("queuedAt edge values round-trip", arguments: [Int64.min, -1, 0, 1, .max])
    func queuedAtRoundTrips(queuedAt: Int64) throws {
        let operation = JournalOperation(id: fixedID, kind: .delete, entity: "e", recordID: "r", queuedAt: queuedAt)
        #expect(try JournalOperation.decode(operation.encoded()).queuedAt == queuedAt)
    }

    @Test("record ids of 1 and 64 bytes (also multi-byte) and long entity names round-trip",
          arguments: ["x", String(repeating: "r", count: 64), String(repeating: "€", count: 21) + "x", String(repeating: "😀", count: 16)])
    func recordIDLengthLimitsRoundTrip(recordID: String) throws {
        let operation = JournalOperation(id: fixedID, kind: .update, entity: String(repeating: "entity", count: 100),
                                         recordID: recordID, fields: ["a": .int(1)], queuedAt: 0)
        #expect(try JournalOperation.decode(operation.encoded()) == operation)
    }

    @Test("random operations round-trip")
    func randomOperationsRoundTrip() throws {
        var rng = SeededGenerator(seed: 0x0FE2)
        for _ in 0..<1_000 {
            let operation = randomOperation(using: &rng)
            #expect(try JournalOperation.decode(operation.encoded()) == operation)
        }
    }

    @Test("decode(from:) leaves the reader after the operation, so operations can be read back to back")
    func decodeFromReaderConsumesExactlyOneOperation() throws {
        var rng = SeededGenerator(seed: 77)
        let operations = (0..<5).map { _ in randomOperation(using: &rng) }
        var writer = ByteWriter()
        for operation in operations { operation.encode(into: &writer) }
        #expect(operations.map { $0.encoded() }.joined().elementsEqual(writer.bytes))
        var reader = ByteReader(writer.bytes)
        for operation in operations { #expect(try JournalOperation.decode(from: &reader) == operation) }
        #expect(reader.isAtEnd)
    }

    @Test("a batch of one operation round-trips and is the count 1 followed by the operation")
    func batchOfOneRoundTrips() throws {
        let operation = JournalOperation(id: fixedID, kind: .update, entity: "pin", recordID: "p1",
                                         fields: ["name": .string("x")], baseUpdatedAt: 3, queuedAt: 4)
        let payload = JournalOperation.encodeBatch([operation])
        #expect(payload == [0x01] + operation.encoded())
        #expect(try JournalOperation.decodeBatch(payload) == [operation])
    }

    @Test("a batch of many operations round-trips in order", arguments: [2, 127, 128, 500])
    func batchOfManyRoundTrips(count: Int) throws {
        var rng = SeededGenerator(seed: UInt64(count))
        let operations = (0..<count).map { _ in randomOperation(using: &rng) }
        let payload = JournalOperation.encodeBatch(operations)
        #expect(try JournalOperation.decodeBatch(payload) == operations)
    }

    // MARK: JournalEntry

    private func record(_ type: RecordType, _ payload: [UInt8]) -> JournalRecord {
        JournalRecord(offset: 80, sequence: 1, type: type, payload: payload)
    }

    @Test("JournalEntry decodes an operation record")
    func entryDecodesOperation() throws {
        let operation = JournalOperation(id: .random(), kind: .create, entity: "pin", recordID: "p1",
                                         fields: ["a": .bool(true)], queuedAt: 1)
        #expect(try JournalEntry.decode(record(.operation, operation.encoded())) == .operation(operation))
    }

    @Test("JournalEntry decodes an operation batch record")
    func entryDecodesBatch() throws {
        var rng = SeededGenerator(seed: 5)
        let operations = (0..<3).map { _ in randomOperation(using: &rng) }
        #expect(try JournalEntry.decode(record(.operationBatch, JournalOperation.encodeBatch(operations))) == .batch(operations))
    }

    @Test("JournalEntry decodes a salvaged record: u64 offset, u64 sequence, u16 type, bytes payload")
    func entryDecodesSalvaged() throws {
        let inner = JournalOperation(id: fixedID, kind: .delete, entity: "pin", recordID: "p1", queuedAt: 7).encoded()
        var writer = ByteWriter()
        writer.writeUInt64(0x0102_0304_0506_0708)
        writer.writeUInt64(42)
        writer.writeUInt16(0x0001)
        writer.writeBytes(inner)
        // Pin the layout by hand too: little-endian fixed-width fields, then a varint length.
        #expect(Array(writer.bytes.prefix(19)) == [0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
                                                   42, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x00, UInt8(inner.count)])
        let entry = try JournalEntry.decode(record(.salvaged, writer.bytes))
        #expect(entry == .salvaged(originalOffset: 0x0102_0304_0506_0708, originalSequence: 42,
                                   originalType: .operation, payload: inner))
    }

    @Test("JournalEntry decodes a salvaged record with an empty payload")
    func entryDecodesEmptySalvaged() throws {
        var writer = ByteWriter()
        writer.writeUInt64(0)
        writer.writeUInt64(0)
        writer.writeUInt16(0x8123)
        writer.writeBytes([UInt8]())
        #expect(try JournalEntry.decode(record(.salvaged, writer.bytes))
            == .salvaged(originalOffset: 0, originalSequence: 0, originalType: RecordType(rawValue: 0x8123), payload: []))
    }

    @Test("JournalEntry decodes reserved types to opaque, whatever their payload",
          arguments: [RecordType.sentMarker, .acknowledgement, .rejection, .conflict, .compaction, .pulledRows,
                      .pullCursors, .checkpoint])
    func reservedTypesDecodeToOpaque(type: RecordType) throws {
        #expect(try JournalEntry.decode(record(type, [0xFF, 0x00, 0x13])) == .opaque(type))
        #expect(try JournalEntry.decode(record(type, [])) == .opaque(type))
    }

    @Test("JournalEntry decodes an unknown skippable type (0x8123) to opaque")
    func unknownSkippableTypeDecodesToOpaque() throws {
        let type = RecordType(rawValue: 0x8123)
        #expect(try JournalEntry.decode(record(type, [1, 2, 3])) == .opaque(type))
    }

    @Test("JournalEntry refuses an unknown non-skippable type (0x0777) with unsupportedType naming sequence, offset and type")
    func unknownNonSkippableTypeThrows() {
        let type = RecordType(rawValue: 0x0777)
        let record = JournalRecord(offset: 1234, sequence: 99, type: type, payload: [])
        #expect(throws: JournalEntry.DecodeError.unsupportedType(sequence: 99, offset: 1234, type: type)) {
            try JournalEntry.decode(record)
        }
    }

    @Test("JournalEntry refuses type 0 (invalid) as unsupported")
    func invalidTypeThrows() {
        #expect(throws: JournalEntry.DecodeError.unsupportedType(sequence: 1, offset: 80, type: .invalid)) {
            try JournalEntry.decode(record(.invalid, []))
        }
    }

    @Test("JournalEntry reports a malformed payload as malformed with the record's sequence, offset, type and the failure")
    func malformedPayloadsAreReportedWithPosition() {
        let good = JournalOperation(id: fixedID, kind: .delete, entity: "pin", recordID: "p1", queuedAt: 7).encoded()
        let cases: [(RecordType, [UInt8], ByteReader.Failure)] = [
            (.operation, good + [0], .trailingBytes(count: 1, at: good.count)),
            (.operation, Array(good.dropLast()), .truncated(at: good.count - 1)),
            (.operationBatch, [0x00], .invalid("empty batch", at: 0)),
            (.salvaged, [UInt8](repeating: 0, count: 17), .truncated(at: 16)),
            (.salvaged, [UInt8](repeating: 0, count: 19) + [0], .trailingBytes(count: 1, at: 19)),
        ]
        for (type, payload, failure) in cases {
            let record = JournalRecord(offset: 4096, sequence: 12, type: type, payload: payload)
            #expect(throws: JournalEntry.DecodeError.malformed(sequence: 12, offset: 4096, type: type, failure)) {
                try JournalEntry.decode(record)
            }
        }
    }

    @Test("record type names used by tools")
    func recordTypeNames() {
        #expect(RecordType.operation.name == "operation")
        #expect(RecordType.operationBatch.name == "batch")
        #expect(RecordType.salvaged.name == "salvaged")
        #expect(RecordType.checkpoint.name == "checkpoint")
        #expect(RecordType(rawValue: 0x0777).name == "0x0777")
        #expect(RecordType.salvaged.isSkippable)
        #expect(!RecordType.operation.isSkippable)
    }
}

import SyncJournalProtocol
import Testing
import SyncJournalCore
import SyncJournalStore
import SyncJournalTesting

/// Bad payloads throw a typed `ByteReader.Failure` naming the position; none of them traps.
///
/// Offsets used below, for `operationPrefix()` (pin/p1):
/// 0-15 id, 16 op, 17 kind length, 18-20 "pin", 21 record id length, 22-23 "p1", 24 presence,
/// and for `createWithRawFieldList` 25 queuedAt, 26 field count, 27 first name length, 28 first name, 29 first tag.
@Suite("Malformed payloads throw typed failures")
struct MalformedPayloadTests {
    /// delete pin/p1, base 5, queuedAt 7: 28 bytes.
    static let delete = operationPrefix(presence: 1) + [0x0A, 0x0E, 0x00]

    static let richOperation = JournalOperation(
        id: fixedID, kind: .create, entity: "pin", recordID: "p1",
        fields: ["a-null": .null, "b-false": .bool(false), "c-true": .bool(true), "d-int": .int(-300),
                 "e-double": .double(-0.0), "f-string": .string("Grüße 😀"), "g-bytes": .bytes(Array(0..<200)),
                 "h-set": .stringSet(["", "x", "日本"])],
        baseUpdatedAt: 1_735_689_600_000, queuedAt: 1_735_689_700_000)

    @Test("the hand-built delete used by these tests is itself valid")
    func baselineIsValid() throws {
        #expect(try JournalOperation.decode(Self.delete)
            == JournalOperation(id: fixedID, kind: .delete, entity: "pin", recordID: "p1", baseUpdatedAt: 5, queuedAt: 7))
        #expect(try JournalOperation.decode(createWithRawFieldList([0x00])).fields.isEmpty)
    }

    // MARK: Truncation and trailing bytes

    /// Truncation is reported as `truncated`, or as `invalid` when a count no longer fits the remaining bytes.
    private func isTruncationFailure(_ failure: ByteReader.Failure?) -> Bool {
        switch failure {
        case .truncated?, .invalid?: return true
        default: return false
        }
    }

    @Test("an operation cut at every byte offset throws")
    func operationTruncatedAtEveryOffsetThrows() {
        for operation in [Self.richOperation, try! JournalOperation.decode(Self.delete)] {
            let bytes = operation.encoded()
            for cut in 0..<bytes.count {
                let failure = operationFailure(Array(bytes[..<cut]))
                #expect(isTruncationFailure(failure), "cut at \(cut) of \(bytes.count) gave \(String(describing: failure))")
            }
        }
    }

    @Test("a batch cut at every byte offset throws, and so does its JournalEntry")
    func batchTruncatedAtEveryOffsetThrows() {
        var rng = SeededGenerator(seed: 0xC07)
        let operations = [Self.richOperation] + (0..<3).map { _ in randomOperation(using: &rng) }
        let bytes = JournalOperation.encodeBatch(operations)
        for cut in 0..<bytes.count {
            let prefix = Array(bytes[..<cut])
            let failure = batchFailure(prefix)
            #expect(isTruncationFailure(failure), "cut at \(cut) of \(bytes.count) gave \(String(describing: failure))")
            let record = JournalRecord(offset: 80, sequence: 3, type: .operationBatch, payload: prefix)
            #expect(throws: JournalEntry.DecodeError.self) { try JournalEntry.decode(record) }
        }
    }

    @Test("the empty payload throws truncated at 0")
    func emptyPayloadThrows() {
        #expect(operationFailure([]) == .truncated(at: 0))
        #expect(batchFailure([]) == .truncated(at: 0))
    }

    @Test("trailing bytes after an operation throw trailingBytes with count and position")
    func trailingBytesAfterOperationThrow() {
        #expect(operationFailure(Self.delete + [0x00]) == .trailingBytes(count: 1, at: 28))
        #expect(operationFailure(Self.delete + Self.delete) == .trailingBytes(count: 28, at: 28))
    }

    @Test("trailing bytes after a batch throw trailingBytes")
    func trailingBytesAfterBatchThrow() {
        let batch = [0x01] + Self.delete
        #expect(batchFailure(batch + [0xFF, 0xFF, 0xFF]) == .trailingBytes(count: 3, at: 29))
    }

    @Test("a batch whose count is one more than its operations throws")
    func batchCountTooLargeThrows() {
        #expect(batchFailure([0x02] + Self.delete) != nil)
        #expect(batchFailure([0x03] + Self.delete + Self.delete) != nil)
        #expect(batchFailure([0x02] + Self.delete + Self.delete) == nil)
    }

    // MARK: Header fields

    @Test("an unknown op byte throws invalid at the op's offset", arguments: [UInt8(0), 4, 5, 0x7F, 0x81, 0xFF])
    func unknownOpThrows(op: UInt8) {
        var bytes = Self.delete
        bytes[16] = op
        #expect(isInvalid(operationFailure(bytes), at: 16))
    }

    // Bit 1 announces a model version (format 2.3), bit 2 a space (2.5);
    // bits 3 to 7 are reserved.
    @Test("unknown presence bits throw invalid at the presence byte", arguments: [UInt8(0x08), 0x0C, 0x10, 0x80, 0xFF])
    func unknownPresenceBitsThrow(presence: UInt8) {
        var bytes = Self.delete
        bytes[24] = presence
        #expect(isInvalid(operationFailure(bytes), at: 24))
    }

    @Test("an empty entity kind throws invalid at the kind")
    func emptyEntityThrows() {
        let bytes = operationPrefix(entity: []) + [0x00, 0x00]
        #expect(isInvalid(operationFailure(bytes), at: 17))
    }

    @Test("an empty record id throws invalid at the record id")
    func emptyRecordIDThrows() {
        let bytes = operationPrefix(recordID: []) + [0x00, 0x00]
        #expect(isInvalid(operationFailure(bytes), at: 21))
    }

    @Test("a 65-byte record id throws invalid at the record id; 64 bytes is accepted")
    func recordIDOver64BytesThrows() throws {
        let over = operationPrefix(recordID: [UInt8](repeating: 0x61, count: 65)) + [0x00, 0x00]
        #expect(isInvalid(operationFailure(over), at: 21))
        let multiByte = operationPrefix(recordID: Array(String(repeating: "€", count: 22).utf8)) + [0x00, 0x00] // 66 bytes
        #expect(isInvalid(operationFailure(multiByte), at: 21))
        let limit = operationPrefix(recordID: [UInt8](repeating: 0x61, count: 64)) + [0x00, 0x00]
        #expect(try JournalOperation.decode(limit).recordID == String(repeating: "a", count: 64))
    }

    @Test("an entity or record id whose length runs past the payload throws")
    func stringLengthPastEndThrows() {
        var bytes = Self.delete
        bytes[17] = 0x7F // "pin" claims 127 bytes
        #expect(operationFailure(bytes) != nil)
        bytes = Self.delete
        bytes[21] = 0x20 // "p1" claims 32 bytes
        #expect(operationFailure(bytes) != nil)
    }

    // MARK: Invalid UTF-8

    static let invalidUTF8: [[UInt8]] = [
        [0x80],                   // lone continuation byte
        [0xC3, 0x28],             // bad continuation
        [0xC3],                   // cut 2-byte sequence
        [0xC0, 0x80],             // overlong NUL
        [0xE0, 0x80, 0xAF],       // overlong '/'
        [0xED, 0xA0, 0x80],       // UTF-16 surrogate D800
        [0xF0, 0x9F, 0x98],       // cut 4-byte sequence
        [0xF4, 0x90, 0x80, 0x80], // above U+10FFFF
        [0xFF],
        [0x61, 0xFE, 0x62],
    ]

    @Test("invalid UTF-8 in the entity kind throws invalidUTF8 at the string", arguments: invalidUTF8)
    func invalidUTF8InEntityThrows(bad: [UInt8]) {
        #expect(operationFailure(operationPrefix(entity: bad) + [0x00, 0x00]) == .invalidUTF8(at: 17))
    }

    @Test("invalid UTF-8 in the record id throws invalidUTF8 at the string", arguments: invalidUTF8)
    func invalidUTF8InRecordIDThrows(bad: [UInt8]) {
        #expect(operationFailure(operationPrefix(recordID: bad) + [0x00, 0x00]) == .invalidUTF8(at: 21))
    }

    @Test("invalid UTF-8 in a field name throws invalidUTF8 at the name", arguments: invalidUTF8)
    func invalidUTF8InFieldNameThrows(bad: [UInt8]) {
        let list: [UInt8] = [0x01, UInt8(bad.count)] + bad + [0x00]
        #expect(operationFailure(createWithRawFieldList(list)) == .invalidUTF8(at: 27))
    }

    @Test("invalid UTF-8 in a string value throws invalidUTF8 at the value's string", arguments: invalidUTF8)
    func invalidUTF8InStringValueThrows(bad: [UInt8]) {
        let list: [UInt8] = [0x01, 0x01, 0x61, 0x05, UInt8(bad.count)] + bad
        #expect(operationFailure(createWithRawFieldList(list)) == .invalidUTF8(at: 30))
    }

    @Test("invalid UTF-8 in a set element throws invalidUTF8 at the element", arguments: invalidUTF8)
    func invalidUTF8InSetElementThrows(bad: [UInt8]) {
        let list: [UInt8] = [0x01, 0x01, 0x73, 0x07, 0x02, 0x00, UInt8(bad.count)] + bad
        #expect(operationFailure(createWithRawFieldList(list)) == .invalidUTF8(at: 32))
    }

    @Test("invalid UTF-8 is not an error in a bytes value")
    func invalidUTF8InBytesValueIsFine() throws {
        let list: [UInt8] = [0x01, 0x01, 0x62, 0x06, 0x02, 0xC0, 0x80]
        #expect(try JournalOperation.decode(createWithRawFieldList(list)).fields == ["b": .bytes([0xC0, 0x80])])
    }

    // MARK: Field lists

    // Tags 0 to 12 are defined (8 to 11 since 2.1, 12 since 2.6): the first undefined ones and the high bit.
    @Test("an unknown field tag throws invalid at the tag", arguments: [UInt8(13), 14, 0x7F, 0x80, 0xFF])
    func unknownFieldTagThrows(tag: UInt8) {
        let list: [UInt8] = [0x01, 0x01, 0x61, tag, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        #expect(isInvalid(operationFailure(createWithRawFieldList(list)), at: 29))
    }

    @Test("an empty field name throws invalid at the name")
    func emptyFieldNameThrows() {
        #expect(isInvalid(operationFailure(createWithRawFieldList([0x01, 0x00, 0x00])), at: 27))
    }

    @Test("field names out of byte order throw invalid at the second name")
    func fieldNamesOutOfOrderThrow() {
        // "b" then "a"
        #expect(isInvalid(operationFailure(createWithRawFieldList([0x02, 0x01, 0x62, 0x00, 0x01, 0x61, 0x00])), at: 30))
        // "ab" then "a" (a prefix sorts first)
        #expect(isInvalid(operationFailure(createWithRawFieldList([0x02, 0x02, 0x61, 0x62, 0x00, 0x01, 0x61, 0x00])), at: 31))
        // "é" (C3 A9) then "z": Swift orders é after z, bytes too, so this is out of order.
        #expect(isInvalid(operationFailure(createWithRawFieldList([0x02, 0x02, 0xC3, 0xA9, 0x00, 0x01, 0x7A, 0x00])), at: 31))
    }

    @Test("field names in byte order are accepted even where Swift String order differs")
    func fieldNamesInByteOrderAccepted() throws {
        // "e\u{301}" (65 CC 81) then "f" (66): ascending bytes, although Swift orders "e\u{301}" after "f".
        let list: [UInt8] = [0x02, 0x03, 0x65, 0xCC, 0x81, 0x00, 0x01, 0x66, 0x00]
        #expect(try JournalOperation.decode(createWithRawFieldList(list)).fields == ["e\u{301}": .null, "f": .null])
    }

    @Test("a repeated field name throws invalid at the repeat")
    func duplicateFieldNameThrows() {
        #expect(isInvalid(operationFailure(createWithRawFieldList([0x02, 0x01, 0x61, 0x00, 0x01, 0x61, 0x02])), at: 30))
    }

    /// Two byte-distinct names that Swift considers equal (NFD "e\u{301}" and NFC "é") are in ascending byte order,
    /// so the decoder accepts them, but `[String: FieldValue]` keeps only one: a field is silently lost.
    @Test("canonically equivalent but byte-distinct field names are refused instead of silently merged")
    func canonicallyEquivalentFieldNamesRefused() {
        let list: [UInt8] = [0x02, 0x03, 0x65, 0xCC, 0x81, 0x03, 0x01, 0x02, 0xC3, 0xA9, 0x03, 0x02]
        #expect(throws: ByteReader.Failure.self) { try JournalOperation.decode(createWithRawFieldList(list)) }
    }

    // MARK: Sets

    @Test("set elements out of byte order throw invalid at the element")
    func setElementsOutOfOrderThrow() {
        // {"b", "a"}
        #expect(isInvalid(operationFailure(createWithRawFieldList([0x01, 0x01, 0x73, 0x07, 0x02, 0x01, 0x62, 0x01, 0x61])), at: 33))
        // {"a", ""}: the empty string sorts first
        #expect(isInvalid(operationFailure(createWithRawFieldList([0x01, 0x01, 0x73, 0x07, 0x02, 0x01, 0x61, 0x00])), at: 33))
    }

    @Test("repeated set elements throw invalid at the repeat")
    func duplicateSetElementsThrow() {
        #expect(isInvalid(operationFailure(createWithRawFieldList([0x01, 0x01, 0x73, 0x07, 0x02, 0x01, 0x61, 0x01, 0x61])), at: 33))
        #expect(isInvalid(operationFailure(createWithRawFieldList([0x01, 0x01, 0x73, 0x07, 0x02, 0x00, 0x00])), at: 32))
    }

    @Test("canonically equivalent but byte-distinct set elements are refused instead of silently merged")
    func canonicallyEquivalentSetElementsRefused() {
        let list: [UInt8] = [0x01, 0x01, 0x73, 0x07, 0x02, 0x03, 0x65, 0xCC, 0x81, 0x02, 0xC3, 0xA9]
        #expect(throws: ByteReader.Failure.self) { try JournalOperation.decode(createWithRawFieldList(list)) }
    }

    // MARK: Counts larger than the payload

    static let hugeCounts: [[UInt8]] = [
        [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], // UInt64.max
        [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], // 2^63
        [0xFF, 0xFF, 0xFF, 0xFF, 0x0F],                               // UInt32.max
        [0x7F],                                                       // 127, just too many
    ]

    @Test("a field count larger than the remaining bytes throws, without allocating", arguments: hugeCounts)
    func hugeFieldCountThrows(count: [UInt8]) {
        #expect(operationFailure(createWithRawFieldList(count + [0x01, 0x61, 0x00])) != nil)
    }

    @Test("a set count larger than the remaining bytes throws, without allocating", arguments: hugeCounts)
    func hugeSetCountThrows(count: [UInt8]) {
        #expect(operationFailure(createWithRawFieldList([0x01, 0x01, 0x73, 0x07] + count + [0x00])) != nil)
    }

    @Test("a string or bytes length larger than the remaining bytes throws, without allocating", arguments: hugeCounts)
    func hugeLengthsThrow(count: [UInt8]) {
        #expect(operationFailure(createWithRawFieldList([0x01, 0x01, 0x73, 0x05] + count + [0x61])) != nil)
        #expect(operationFailure(createWithRawFieldList([0x01, 0x01, 0x73, 0x06] + count + [0x61])) != nil)
        #expect(operationFailure(createWithRawFieldList([0x01] + count + [0x61, 0x00])) != nil)
        #expect(operationFailure(fixedIDBytes + [0x03] + count + [0x61]) != nil)
    }

    @Test("a batch count larger than the remaining bytes throws, without allocating", arguments: hugeCounts)
    func hugeBatchCountThrows(count: [UInt8]) {
        #expect(batchFailure(count + Self.delete) != nil)
    }

    @Test("an empty batch (count 0) throws invalid at 0")
    func emptyBatchThrows() {
        #expect(batchFailure([0x00]) == .invalid("empty batch", at: 0))
        #expect(isInvalid(batchFailure([0x00] + Self.delete), at: 0))
    }

    @Test("an overflowing varint inside an operation throws varintOverflow at the varint")
    func overflowingVarintInOperationThrows() {
        let overflow = [UInt8](repeating: 0xFF, count: 10) + [0x01]
        #expect(operationFailure(operationPrefix(presence: 1) + overflow + [0x00, 0x00]) == .varintOverflow(at: 25))
        #expect(operationFailure(operationPrefix() + overflow + [0x00]) == .varintOverflow(at: 25))
    }

    // MARK: The encoder does not validate

    /// `encode` writes whatever it is given; the limits are enforced only when reading. These payloads are
    /// therefore refused by `decode`: a caller that appends such an operation makes its record undecodable.
    @Test("operations outside the format's limits encode to payloads that decode refuses")
    func outOfLimitOperationsAreRefusedOnDecode() {
        let base = JournalOperation(id: fixedID, kind: .create, entity: "pin", recordID: "p1", queuedAt: 0)
        var emptyEntity = base
        emptyEntity.entity = ""
        var emptyRecordID = base
        emptyRecordID.recordID = ""
        var longRecordID = base
        longRecordID.recordID = String(repeating: "r", count: 65)
        var emptyFieldName = base
        emptyFieldName.fields = ["": .null]
        for operation in [emptyEntity, emptyRecordID, longRecordID, emptyFieldName] {
            #expect(throws: ByteReader.Failure.self) { try JournalOperation.decode(operation.encoded()) }
        }
        #expect(JournalOperation.encodeBatch([]) == [0x00])
        #expect(throws: ByteReader.Failure.self) { try JournalOperation.decodeBatch(JournalOperation.encodeBatch([])) }
    }

    @Test("a batch payload in an operation record, or an operation payload in a batch record, is malformed")
    func payloadOfTheOtherTypeIsMalformed() {
        let single = Self.delete
        let batch = [0x02] + Self.delete + Self.delete
        #expect(throws: JournalEntry.DecodeError.self) {
            try JournalEntry.decode(JournalRecord(offset: 80, sequence: 1, type: .operation, payload: batch))
        }
        #expect(throws: JournalEntry.DecodeError.self) {
            try JournalEntry.decode(JournalRecord(offset: 80, sequence: 1, type: .operationBatch, payload: single))
        }
    }
}

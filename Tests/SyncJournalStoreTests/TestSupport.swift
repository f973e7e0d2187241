import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting


/// A fixed id `00 01 02 … 0f`, so expected bytes can be written by hand.
let fixedID = OperationID(bytes: Array(0..<16))!

/// The bytes of `fixedID`.
let fixedIDBytes: [UInt8] = Array(0..<16)

/// Characters random strings are built from: ASCII, 2-, 3- and 4-byte UTF-8 and a NUL.
/// No combining marks, so that no two generated strings are canonically equivalent
/// while having different bytes (that case has its own test).
let stringAlphabet: [Character] = ["a", "b", "z", "A", "Z", "0", "9", " ", "_", "-", "\u{0}", "\u{7F}",
                                   "é", "ß", "Ω", "Ж", "ش", "日", "本", "€", "\u{FFFD}", "😀", "🎉", "𝄞"]

func randomString<G: RandomNumberGenerator>(length: ClosedRange<Int>, using rng: inout G) -> String {
    String((0..<Int.random(in: length, using: &rng)).map { _ in stringAlphabet.randomElement(using: &rng)! })
}

func randomBytes<G: RandomNumberGenerator>(count: Int, using rng: inout G) -> [UInt8] {
    (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
}

/// An Int64 biased towards the edges (0, ±1, the extremes, values around varint byte boundaries).
func randomInt64<G: RandomNumberGenerator>(using rng: inout G) -> Int64 {
    switch Int.random(in: 0..<4, using: &rng) {
    case 0: return [0, 1, -1, 63, -64, 64, -65, .min, .max, .min + 1, .max - 1].randomElement(using: &rng)!
    case 1: return Int64.random(in: -1_000...1_000, using: &rng)
    case 2: return Int64(bitPattern: rng.next()) >> UInt64.random(in: 0...63, using: &rng)
    default: return Int64(bitPattern: rng.next())
    }
}

func randomFieldValue<G: RandomNumberGenerator>(using rng: inout G) -> FieldValue {
    switch Int.random(in: 0..<7, using: &rng) {
    case 0: return .null
    case 1: return .bool(Bool.random(using: &rng))
    case 2: return .int(randomInt64(using: &rng))
    case 3: return .double(Double(bitPattern: rng.next()))
    case 4: return .string(randomString(length: 0...12, using: &rng))
    case 5: return .bytes(randomBytes(count: Int.random(in: 0...12, using: &rng), using: &rng))
    default:
        return .stringSet(Set((0..<Int.random(in: 0...5, using: &rng)).map { _ in randomString(length: 0...6, using: &rng) }))
    }
}

func randomFields<G: RandomNumberGenerator>(count: ClosedRange<Int>, using rng: inout G) -> [String: FieldValue] {
    var fields: [String: FieldValue] = [:]
    for _ in 0..<Int.random(in: count, using: &rng) {
        fields[randomString(length: 1...8, using: &rng)] = randomFieldValue(using: &rng)
    }
    return fields
}

/// A valid operation: non-empty entity, a record id of 1...64 UTF-8 bytes, fields as the kind requires.
func randomOperation<G: RandomNumberGenerator>(using rng: inout G) -> JournalOperation {
    let kind = OperationKind.allCases.randomElement(using: &rng)!
    var recordID = randomString(length: 1...20, using: &rng)
    while recordID.utf8.count > JournalOperation.maximumRecordIDLength { recordID.removeLast() }
    return JournalOperation(
        id: .random(using: &rng),
        kind: kind,
        entity: randomString(length: 1...10, using: &rng),
        recordID: recordID,
        fields: kind == .delete ? [:] : randomFields(count: 0...6, using: &rng),
        baseUpdatedAt: Bool.random(using: &rng) ? randomInt64(using: &rng) : nil,
        queuedAt: randomInt64(using: &rng))
}

/// The failure `JournalOperation.decode` throws for `bytes`, or `nil` if it decodes.
func operationFailure(_ bytes: [UInt8]) -> ByteReader.Failure? {
    do throws(ByteReader.Failure) {
        _ = try JournalOperation.decode(bytes)
        return nil
    } catch {
        return error
    }
}

/// The failure `JournalOperation.decodeBatch` throws for `bytes`, or `nil` if it decodes.
func batchFailure(_ bytes: [UInt8]) -> ByteReader.Failure? {
    do throws(ByteReader.Failure) {
        _ = try JournalOperation.decodeBatch(bytes)
        return nil
    } catch {
        return error
    }
}

/// Whether `failure` is `.invalid` at `position`.
func isInvalid(_ failure: ByteReader.Failure?, at position: Int) -> Bool {
    if case .invalid(_, let at)? = failure { return at == position }
    return false
}

/// The header of an operation by `fixedID` up to and including the presence byte:
/// `id, op, entity, recordID, presence`.
func operationPrefix(op: UInt8 = 3, entity: [UInt8] = Array("pin".utf8), recordID: [UInt8] = Array("p1".utf8),
                     presence: UInt8 = 0) -> [UInt8] {
    var writer = ByteWriter()
    writer.writeRaw(fixedIDBytes)
    writer.writeUInt8(op)
    writer.writeBytes(entity)
    writer.writeBytes(recordID)
    writer.writeUInt8(presence)
    return writer.bytes
}

/// A create by `fixedID` of `pin`/`p1` without base, queuedAt 0, whose field list is `fieldList` (raw bytes).
func createWithRawFieldList(_ fieldList: [UInt8]) -> [UInt8] {
    operationPrefix(op: 1) + [0x00] + fieldList
}

/// The encoding of a create by `fixedID` of `pin`/`p1` holding `fields`.
func encodedCreate(_ fields: [String: FieldValue]) -> [UInt8] {
    JournalOperation(id: fixedID, kind: .create, entity: "pin", recordID: "p1", fields: fields, queuedAt: 0).encoded()
}

/// What is wrong at the offset where a journal stops verifying.
public enum JournalDamage: Sendable, Hashable, CustomStringConvertible {
    /// The header is unusable (bad checksum, truncated, impossible field).
    case header(JournalHeaderProblem)
    /// Fewer than 28 bytes remain: a record header was cut short.
    case incompleteRecordHeader(available: Int)
    /// The payload runs past the end of the file.
    case incompletePayload(declared: UInt32, available: Int)
    /// The length field is larger than the maximum record size.
    case impossibleLength(UInt32)
    /// The checksum does not match the bytes (format 1.x: the frame's one
    /// checksum; format 2: the payload's, under a header that verified).
    case checksumMismatch
    /// Format 2: the record header's own checksum does not match.
    case recordHeaderChecksumMismatch
    /// Format 2: a record header that verifies claims a sync horizon past
    /// its own offset or before the end of the file header, which no
    /// writer does.
    case horizonBeyondRecord(horizon: Int64)
    /// The record verifies but belongs to another file's generation (stale bytes).
    case foreignGeneration(UInt64)
    /// The record verifies but carries type 0 or a non-zero reserved field.
    case invalidRecordHeader
    /// A verified record has the wrong sequence number (a gap or a repeat).
    case sequenceMismatch(expected: UInt64, found: UInt64)
    /// A damaged region is followed by a valid record of this generation at `validRecordAt`.
    indirect case damageBeforeValidRecord(JournalDamage, validRecordAt: Int64)
    /// Format 2: a later record, at `recordAt`, was written when the file
    /// was already durable up to `horizon`, past the damage: the damaged
    /// bytes had reached the disk and changed afterwards.
    indirect case damageBehindHorizon(JournalDamage, recordAt: Int64, horizon: Int64)
    /// Format 2: the damaged record is complete, and the bytes of it that
    /// an interrupted append could have left unwritten (its sectors that
    /// read as zeros) cannot account for the mismatch, so no interrupted
    /// append explains it.
    indirect case damagedCompleteRecord(JournalDamage)
    /// Format 2: a record header that fails its checksum holds, in a sector
    /// that was written, a `field` other than the one its writer puts there
    /// (the file's generation, the next sequence number, zero reserved
    /// bits, a horizon no greater than the record's offset, a length of at
    /// most 16 MiB); the first differing byte is at `byteOffset`.
    indirect case alteredHeaderField(JournalDamage, field: String, byteOffset: Int64)
    /// Format 2.2: the file ends at `fileSize`, which is not a multiple of
    /// the sector size: only a clean close or a synced cut leaves a journal
    /// there, never a power cut, so every record was durable and the damage
    /// came after.
    indirect case damageInClosedJournal(JournalDamage, fileSize: Int64)
    /// Format 2: a verified record header with an empty payload whose
    /// payload checksum is not the one of no bytes: no writer writes it.
    case emptyPayloadChecksum(UInt32)
    /// Format 2: flipping the one bit at `byteOffset`, `bit` would make the
    /// record verify: a flipped bit, which no interrupted append produces.
    indirect case flippedBit(JournalDamage, byteOffset: Int64, bit: Int)
    /// Format 2: a non-zero byte at `byteOffset` lies farther past the damage
    /// than the header's in-flight limit lets any unsynced append reach.
    indirect case beyondInFlightLimit(JournalDamage, byteOffset: Int64, limit: UInt32)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .header(let problem): return problem.description
        case .incompleteRecordHeader(let available): return "incomplete record header (\(available) of \(JournalFormat.recordHeaderLength) bytes)"
        case .incompletePayload(let declared, let available): return "incomplete record (payload of \(declared) bytes, \(available) present)"
        case .impossibleLength(let length): return "impossible record length \(length)"
        case .checksumMismatch: return "checksum mismatch"
        case .recordHeaderChecksumMismatch: return "record header checksum mismatch"
        case .horizonBeyondRecord(let horizon): return "record claims sync horizon \(horizon), outside the file header's end and its own offset"
        case .foreignGeneration(let generation): return "record of another generation (\(generation))"
        case .invalidRecordHeader: return "invalid record header"
        case .sequenceMismatch(let expected, let found): return "sequence \(found) where \(expected) was expected"
        case .damageBeforeValidRecord(let inner, let at): return "\(inner), followed by a valid record at offset \(at)"
        case .damageBehindHorizon(let inner, let at, let horizon):
            return "\(inner) in bytes that were durable: the record at offset \(at) was written when the file was durable up to \(horizon)"
        case .damagedCompleteRecord(let inner):
            return "\(inner) in a complete record whose unwritten sectors, if any, cannot explain it (not an interrupted append)"
        case .alteredHeaderField(let inner, let field, let byte):
            return "\(inner): the \(field) at offset \(byte) is not what a writer puts there (not an interrupted append)"
        case .damageInClosedJournal(let inner, let size):
            return "\(inner) in a journal that was closed (it ends at \(size), where no power cut leaves one): every record was durable"
        case .emptyPayloadChecksum(let checksum):
            return "empty payload with payload checksum \(String(checksum, radix: 16)), which no writer writes"
        case .flippedBit(let inner, let byte, let bit): return "\(inner): a flipped bit at offset \(byte), bit \(bit) (not an interrupted append)"
        case .beyondInFlightLimit(let inner, let byte, let limit):
            return "\(inner), and a non-zero byte at offset \(byte), beyond what \(limit) bytes in flight could reach"
        }
    }
}

/// What is wrong at the offset where a journal stops verifying.
public enum JournalDamage: Sendable, Hashable, CustomStringConvertible {
    /// The header is unusable (bad checksum, truncated, impossible field).
    case header(JournalHeader.Problem)
    /// Fewer than 28 bytes remain: a record header was cut short.
    case incompleteRecordHeader(available: Int)
    /// The payload runs past the end of the file.
    case incompletePayload(declared: UInt32, available: Int)
    /// The length field is larger than the maximum record size.
    case impossibleLength(UInt32)
    /// The checksum does not match the bytes.
    case checksumMismatch
    /// The record verifies but belongs to another file's generation (stale bytes).
    case foreignGeneration(UInt64)
    /// The record verifies but carries type 0 or a non-zero reserved field.
    case invalidRecordHeader
    /// A verified record has the wrong sequence number (a gap or a repeat).
    case sequenceMismatch(expected: UInt64, found: UInt64)
    /// A damaged region is followed by a valid record of this generation at `validRecordAt`.
    case damageBeforeValidRecord(JournalDamage.Indirect, validRecordAt: Int64)

    /// Boxes a damage value so ``JournalDamage`` can refer to itself.
    public struct Indirect: Sendable, Hashable {
        private let storage: [JournalDamage]
        /// Boxes `damage`.
        public init(_ damage: JournalDamage) { storage = [damage] }
        /// The boxed damage.
        public var damage: JournalDamage { storage[0] }
    }

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .header(let problem): return problem.description
        case .incompleteRecordHeader(let available): return "incomplete record header (\(available) of \(JournalFormat.recordHeaderLength) bytes)"
        case .incompletePayload(let declared, let available): return "incomplete record (payload of \(declared) bytes, \(available) present)"
        case .impossibleLength(let length): return "impossible record length \(length)"
        case .checksumMismatch: return "checksum mismatch"
        case .foreignGeneration(let generation): return "record of another generation (\(generation))"
        case .invalidRecordHeader: return "invalid record header"
        case .sequenceMismatch(let expected, let found): return "sequence \(found) where \(expected) was expected"
        case .damageBeforeValidRecord(let inner, let at): return "\(inner.damage), followed by a valid record at offset \(at)"
        }
    }
}

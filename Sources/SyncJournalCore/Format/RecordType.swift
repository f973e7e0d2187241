/// A record's type number (`journals/FORMAT.md`, section 2).
///
/// Layers above the core add their own constants in extensions. Bit 15 marks
/// a type that a reader which does not know it may skip.
package struct RecordType: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 16-bit type number as stored.
    package let rawValue: UInt16

    /// Wraps a stored type number.
    package init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The bit that marks a skippable type.
    package static let skippableBit: UInt16 = 0x8000

    /// Whether a reader that does not know this type may ignore it.
    package var isSkippable: Bool { rawValue & Self.skippableBit != 0 }

    /// Type 0 is never valid, so a zero-filled region never parses as a record.
    package static let invalid = RecordType(rawValue: 0)
    /// A checkpoint snapshot (written by the store layer's checkpoints).
    package static let checkpoint = RecordType(rawValue: 0x0F00)
    /// A record copied by salvage from after a damaged region, kept for a human to inspect.
    package static let salvaged = RecordType(rawValue: 0x8F01)
    /// Format 2: an empty record a bulk writer appends when it closes, so
    /// that its sync horizon covers every record before it. Without it the
    /// records of a whole import are never claimed durable by a later one,
    /// and a sector of theirs that rots to zeros would read as an
    /// interrupted append.
    package static let syncHorizon = RecordType(rawValue: 0x8F02)

    package static func < (lhs: RecordType, rhs: RecordType) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `0x0001` style hex.
    package var description: String {
        let hex = String(rawValue, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}

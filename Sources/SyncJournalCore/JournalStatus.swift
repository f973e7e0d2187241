/// How a journal file was found by the reader (`journals/FORMAT.md`, section 3).
public enum JournalStatus: Sendable, Hashable, CustomStringConvertible {
    /// Every byte after the header belongs to a valid record.
    case clean
    /// The file ends in damage with nothing valid after it: what a crash in
    /// the middle of an append leaves. Opening for writing cuts it off.
    case tornTail(offset: Int64, damage: JournalDamage)
    /// Damage that a crash cannot explain. Never repaired silently.
    case corrupt(offset: Int64, damage: JournalDamage)
    /// The file is intact up to `offset`, where a verified record (or the
    /// header) uses something this reader does not understand: a reserved
    /// field or flag that is not zero, or a type it does not know and may not
    /// skip. Written by a newer version: the journal is read-only here, and
    /// nothing is ever cut or appended.
    case unsupported(offset: Int64, reason: UnsupportedContent)

    /// `clean`, `torn-tail` or `corrupt`, as `journal-dump` prints it.
    package var name: String {
        switch self {
        case .clean: return "clean"
        case .tornTail: return "torn-tail"
        case .corrupt: return "corrupt"
        case .unsupported: return "unsupported"
        }
    }

    /// Where the damage starts, if there is any.
    public var damageOffset: Int64? {
        switch self {
        case .clean: return nil
        case .tornTail(let offset, _), .corrupt(let offset, _): return offset
        case .unsupported: return nil
        }
    }

    /// What the damage is, if there is any.
    public var damage: JournalDamage? {
        switch self {
        case .clean: return nil
        case .tornTail(_, let damage), .corrupt(_, let damage): return damage
        case .unsupported: return nil
        }
    }

    /// `clean`, or the status with its offset and reason.
    public var description: String {
        switch self {
        case .clean: return "clean"
        case .tornTail(let offset, let damage): return "torn-tail at offset \(offset): \(damage)"
        case .corrupt(let offset, let damage): return "corrupt at offset \(offset): \(damage)"
        case .unsupported(let offset, let reason): return "unsupported at offset \(offset): \(reason) (read-only for this version)"
        }
    }
}

/// What a reader found that it does not understand in an intact journal.
public enum UnsupportedContent: Sendable, Hashable, CustomStringConvertible {
    /// A verified record of a type this reader does not know and may not
    /// skip (`type` is the type number as stored; FORMAT.md, section 2).
    case recordType(UInt16, sequence: UInt64)
    /// A verified record whose reserved field is not zero.
    case reservedField(value: UInt16, sequence: UInt64)
    /// A verified header with flags or a reserved field that are not zero.
    case headerFlags(flags: UInt32, reserved: UInt32)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .recordType(let type, let sequence): return "record \(sequence) has type \(RecordType(rawValue: type)), which this version does not know and may not skip"
        case .reservedField(let value, let sequence): return "record \(sequence) has reserved field \(value), which this version does not understand"
        case .headerFlags(let flags, let reserved): return "header flags \(flags) (reserved \(reserved)) are not understood by this version"
        }
    }
}

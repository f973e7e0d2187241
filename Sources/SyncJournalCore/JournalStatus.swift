/// How a journal file was found by the reader (`journals/FORMAT.md`, section 3).
public enum JournalStatus: Sendable, Hashable, CustomStringConvertible {
    /// Every byte after the header belongs to a valid record.
    case clean
    /// The file ends in damage with nothing valid after it: what a crash in
    /// the middle of an append leaves. Opening for writing cuts it off.
    case tornTail(offset: Int64, damage: JournalDamage)
    /// Damage that a crash cannot explain. Never repaired silently.
    case corrupt(offset: Int64, damage: JournalDamage)

    /// `clean`, `torn-tail` or `corrupt`, as `journal-dump` prints it.
    public var name: String {
        switch self {
        case .clean: return "clean"
        case .tornTail: return "torn-tail"
        case .corrupt: return "corrupt"
        }
    }

    /// Where the damage starts, if there is any.
    public var damageOffset: Int64? {
        switch self {
        case .clean: return nil
        case .tornTail(let offset, _), .corrupt(let offset, _): return offset
        }
    }

    /// What the damage is, if there is any.
    public var damage: JournalDamage? {
        switch self {
        case .clean: return nil
        case .tornTail(_, let damage), .corrupt(_, let damage): return damage
        }
    }

    /// `clean`, or the status with its offset and reason.
    public var description: String {
        switch self {
        case .clean: return "clean"
        case .tornTail(let offset, let damage): return "torn-tail at offset \(offset): \(damage)"
        case .corrupt(let offset, let damage): return "corrupt at offset \(offset): \(damage)"
        }
    }
}

/// A typed value of one field of a record.
///
/// ```swift
/// let fields: [String: FieldValue] = ["title": .string("Tapas bar"), "rating": .int(5), "tags": .stringSet(["food"])]
/// ```
public enum FieldValue: Sendable, Hashable {
    /// No value.
    case null
    /// A boolean.
    case bool(Bool)
    /// A 64-bit signed integer.
    case int(Int64)
    /// An IEEE 754 double.
    case double(Double)
    /// A UTF-8 string.
    case string(String)
    /// Raw bytes.
    case bytes([UInt8])
    /// A set of strings (merged by union on conflicts).
    case stringSet(Set<String>)

    /// The tag byte of this value's encoding (`journals/FORMAT.md`, section 4).
    package var tag: UInt8 {
        switch self {
        case .null: return 0
        case .bool(let value): return value ? 2 : 1
        case .int: return 3
        case .double: return 4
        case .string: return 5
        case .bytes: return 6
        case .stringSet: return 7
        }
    }

    /// The name of the value's type, as `journal-dump` prints it.
    package var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "bool"
        case .int: return "int64"
        case .double: return "double"
        case .string: return "string"
        case .bytes: return "bytes"
        case .stringSet: return "set"
        }
    }

    /// Whether two values are the same value of the same type.
    // Doubles compare by bit pattern so that NaN round-trips equal and the
    // journal's bytes decide identity.
    public static func == (lhs: FieldValue, rhs: FieldValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): return a == b
        case (.bytes(let a), .bytes(let b)): return a == b
        case (.stringSet(let a), .stringSet(let b)): return a == b
        default: return false
        }
    }

    /// Hashes the type tag and the value (a double by its bit pattern, as ``==`` compares it).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(tag)
        switch self {
        case .null, .bool: break
        case .int(let value): hasher.combine(value)
        case .double(let value): hasher.combine(value.bitPattern)
        case .string(let value): hasher.combine(value)
        case .bytes(let value): hasher.combine(value)
        case .stringSet(let value): hasher.combine(value)
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A typed value of one field of a record.
///
/// Arrays and objects nest at most ``maximumNestingDepth`` deep; the store refuses deeper values
/// and every decoder rejects them.
///
/// ```swift
/// let fields: [String: FieldValue] = ["title": .string("Tapas bar"), "rating": .int(5), "tags": .stringSet(["food"])]
/// let more: [String: FieldValue] = ["visitedAt": .timestamp(1_764_000_000_000_000),
///                                   "address": .object(["city": .string("Munich"), "zip": .string("80331")]),
///                                   "scores": .array([.int(4), .int(5)])]
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
    /// A moment in time: microseconds since 1970-01-01T00:00:00Z (negative before it).
    case timestamp(Int64)
    /// A UUID, kept as its 16 bytes.
    case uuid(UUID)
    /// An ordered list of values (any types, mixed).
    case array([FieldValue])
    /// Named values; merged as one value on conflicts (the merge works per top-level field).
    case object([String: FieldValue])
    /// A file that belongs to the record: its content's name, size and media
    /// type (the bytes are kept beside the journal, see ``Attachment``).
    case attachment(Attachment)

    /// The most arrays and objects that may nest inside one another in one field value:
    /// `.array([.int(1)])` nests 1 deep, `.object(["a": .array([])])` 2 deep.
    public static let maximumNestingDepth = 10

    /// How many arrays and objects nest inside one another here: 0 for a scalar, 1 for an
    /// array or object of scalars (or an empty one), and so on.
    ///
    /// The count stops at one more than ``maximumNestingDepth``, so a deep value
    /// built in memory never makes this walk deep.
    public var nestingDepth: Int { depth(limit: Self.maximumNestingDepth + 1) }

    /// The nesting depth, or `limit` when it is at least `limit`.
    private func depth(limit: Int) -> Int {
        if limit <= 0 { return 0 }
        switch self {
        case .array(let elements):
            var deepest = 0
            for element in elements { deepest = max(deepest, element.depth(limit: limit - 1)); if deepest >= limit - 1 { break } }
            return 1 + deepest
        case .object(let members):
            var deepest = 0
            for member in members.values { deepest = max(deepest, member.depth(limit: limit - 1)); if deepest >= limit - 1 { break } }
            return 1 + deepest
        default:
            return 0
        }
    }

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
        case .timestamp: return 8
        case .uuid: return 9
        case .array: return 10
        case .object: return 11
        case .attachment: return 12
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
        case .timestamp: return "timestamp"
        case .uuid: return "uuid"
        case .array: return "array"
        case .object: return "object"
        case .attachment: return "attachment"
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
        case (.timestamp(let a), .timestamp(let b)): return a == b
        case (.uuid(let a), .uuid(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)): return a == b
        case (.attachment(let a), .attachment(let b)): return a == b
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
        case .timestamp(let value): hasher.combine(value)
        case .uuid(let value): hasher.combine(value)
        case .array(let value): hasher.combine(value)
        case .object(let value): hasher.combine(value)
        case .attachment(let value): hasher.combine(value)
        }
    }
}

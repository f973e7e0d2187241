import SyncJournalCore

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
    public var tag: UInt8 {
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
    public var typeName: String {
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

extension FieldValue {
    /// Appends the value's encoding.
    package func encode(into writer: inout ByteWriter) {
        writer.writeUInt8(tag)
        switch self {
        case .null, .bool: break
        case .int(let value): writer.writeZigzag(value)
        case .double(let value): writer.writeUInt64(value.bitPattern)
        case .string(let value): writer.writeString(value)
        case .bytes(let value): writer.writeBytes(value)
        case .stringSet(let value):
            let sorted = value.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            writer.writeVarint(UInt64(sorted.count))
            for element in sorted { writer.writeString(element) }
        }
    }

    /// Reads one encoded value.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> FieldValue {
        let at = reader.position
        switch try reader.readUInt8() {
        case 0: return .null
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3: return .int(try reader.readZigzag())
        case 4: return .double(Double(bitPattern: try reader.readUInt64()))
        case 5: return .string(try reader.readString())
        case 6: return .bytes(try reader.readBytes())
        case 7:
            let count = try reader.readCount()
            var set = Set<String>()
            var previous: [UInt8]?
            for _ in 0..<count {
                let elementAt = reader.position
                let element = try reader.readString()
                let bytes = Array(element.utf8)
                if let previous, !previous.lexicographicallyPrecedes(bytes) {
                    throw .invalid("set elements out of order or repeated", at: elementAt)
                }
                previous = bytes
                // Swift compares strings by canonical equivalence: two distinct
                // byte sequences may be one element. Refuse rather than merge.
                if !set.insert(element).inserted {
                    throw .invalid("set elements are canonically equivalent", at: elementAt)
                }
            }
            return .stringSet(set)
        case let tag:
            throw .invalid("unknown field type \(tag)", at: at)
        }
    }
}

/// Encoding of a field list: a count, then name and value pairs in ascending
/// byte order of the names.
package enum FieldListCodec {
    /// Appends `fields` in canonical order.
    package static func encode(_ fields: [String: FieldValue], into writer: inout ByteWriter) {
        writer.writeVarint(UInt64(fields.count))
        // The pairs are sorted, comparing the names' bytes where they lie: no
        // array per comparison and no lookup per name (checkpoints encode
        // every live record's fields).
        for (name, value) in fields.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            writer.writeString(name)
            value.encode(into: &writer)
        }
    }

    /// Reads a field list, refusing empty, repeated or unordered names.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> [String: FieldValue] {
        let count = try reader.readCount(minimumItemSize: 2)
        // Replay decodes every record: one allocation for the table, and each
        // name made once, in place (its bytes are compared where they lie in
        // the payload).
        var fields = [String: FieldValue](minimumCapacity: count)
        var previous: Range<Int>?
        // Swift compares strings by canonical equivalence, so a name can
        // equal an earlier one whose bytes differ; but two ASCII strings are
        // equal only when their bytes are, and the order check already
        // refuses equal bytes. So while every name is ASCII the table need
        // not be searched before the insert.
        var allASCII = true
        for _ in 0..<count {
            let at = reader.position
            let name = try reader.readString()
            let bytes = (reader.position - name.utf8.count)..<reader.position
            if bytes.isEmpty { throw .invalid("empty field name", at: at) }
            let (ordered, ascii) = reader.bytes.withUnsafeBufferPointer { payload in
                let current = UnsafeBufferPointer(rebasing: payload[bytes])
                let ordered = previous.map { UnsafeBufferPointer(rebasing: payload[$0]).lexicographicallyPrecedes(current) } ?? true
                return (ordered, current.allSatisfy { $0 < 0x80 })
            }
            if !ordered { throw .invalid("field names out of order or repeated", at: at) }
            previous = bytes
            allASCII = allASCII && ascii
            if !allASCII && fields[name] != nil { throw .invalid("field names are canonically equivalent", at: at) }
            fields[name] = try FieldValue.decode(from: &reader)
        }
        return fields
    }
}

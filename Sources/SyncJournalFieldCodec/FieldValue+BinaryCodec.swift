import SyncJournalCore
import SyncJournalProtocol

/// The binary encoding of one field value (`journals/FORMAT.md`, section 4):
/// its tag byte, then the value.
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

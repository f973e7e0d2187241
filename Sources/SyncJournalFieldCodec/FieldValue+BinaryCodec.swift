#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
        case .timestamp(let microseconds): writer.writeZigzag(microseconds)
        case .uuid(let value):
            let bytes = value.uuid
            writer.writeRaw([bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5, bytes.6, bytes.7,
                             bytes.8, bytes.9, bytes.10, bytes.11, bytes.12, bytes.13, bytes.14, bytes.15])
        case .array(let elements):
            writer.writeVarint(UInt64(elements.count))
            for element in elements { element.encode(into: &writer) }
        case .object(let members):
            FieldListCodec.encode(members, into: &writer)
        case .attachment(let attachment):
            writer.writeRaw(attachment.content.bytes)
            writer.writeVarint(UInt64(max(0, attachment.size)))
            writer.writeString(attachment.mediaType)
        }
    }

    /// The bytes ``encode(into:)`` appends, counted without writing them.
    package var encodedLength: Int {
        switch self {
        case .null, .bool: return 1
        case .int(let value), .timestamp(let value): return 1 + EncodedLength.zigzag(value)
        case .double: return 1 + 8
        case .string(let value): return 1 + EncodedLength.string(value)
        case .bytes(let value): return 1 + EncodedLength.bytes(count: value.count)
        case .stringSet(let value):
            return value.reduce(1 + EncodedLength.varint(UInt64(value.count))) { $0 + EncodedLength.string($1) }
        case .uuid: return 1 + 16
        case .array(let elements):
            return elements.reduce(1 + EncodedLength.varint(UInt64(elements.count))) { $0 + $1.encodedLength }
        case .object(let members): return 1 + FieldListCodec.encodedLength(members)
        case .attachment(let attachment):
            return 1 + 32 + EncodedLength.varint(UInt64(max(0, attachment.size))) + EncodedLength.string(attachment.mediaType)
        }
    }

    /// Reads one encoded value whose arrays and objects nest at most `depth` deep
    /// (``FieldValue/maximumNestingDepth`` for the value of a field).
    package static func decode(from reader: inout ByteReader,
                               depth: Int = FieldValue.maximumNestingDepth) throws(ByteReader.Failure) -> FieldValue {
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
        case 8: return .timestamp(try reader.readZigzag())
        case 9:
            let b = try reader.readRaw(16)
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                                     b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case 10:
            if depth <= 0 { throw Self.tooDeep(at: at) }
            let count = try reader.readCount()
            var elements: [FieldValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(try decode(from: &reader, depth: depth - 1)) }
            return .array(elements)
        case 11:
            if depth <= 0 { throw Self.tooDeep(at: at) }
            return .object(try FieldListCodec.decode(from: &reader, depth: depth - 1))
        case 12:
            guard let content = ContentHash(bytes: try reader.readRaw(32)) else { throw .invalid("an attachment's hash is not 32 bytes", at: at) }
            let sizeAt = reader.position
            let size = try reader.readVarint()
            guard size <= UInt64(Int64.max) else { throw .invalid("an attachment's size \(size) is past the largest Int64", at: sizeAt) }
            let attachment = Attachment(content: content, size: Int64(size), mediaType: try reader.readString())
            if let problem = attachment.problem { throw .invalid(problem, at: at) }
            return .attachment(attachment)
        case let tag:
            throw .invalid("unknown field type \(tag)", at: at)
        }
    }

    /// The failure of an array or object nested deeper than the format allows.
    private static func tooDeep(at offset: Int) -> ByteReader.Failure {
        .invalid("arrays and objects nested more than \(FieldValue.maximumNestingDepth) deep", at: offset)
    }
}

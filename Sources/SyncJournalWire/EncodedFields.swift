#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncJournalProtocol

/// A record's field list kept in the field codec's encoding (the bytes the
/// server's storage writes: a count, then name and value pairs in ascending
/// byte order of the names), with where each value lies.
///
/// The server carries a push's fields this way from the request body to the
/// database and back into the reply: a value is never built as a
/// ``FieldValue``, which costs 24 bytes or more per array element where the
/// encoding costs about what the JSON did. Only whole fields are looked at
/// (their names, their count, an update's merge), never inside a value.
///
/// ```swift
/// let stored = try EncodedFields(list: bytes)      // a row read back
/// let merged = stored.merging(update)              // an update's fields win
/// ```
package struct EncodedFields: Sendable, Hashable {
    /// One field: its name and the range of its value's encoding in ``bytes``.
    package struct Field: Sendable, Hashable {
        package var name: String
        package var value: Range<Int>
    }

    /// The whole field list in the field codec's encoding.
    package private(set) var bytes: [UInt8]
    /// The fields in the list's order (ascending UTF-8 bytes of the names).
    package private(set) var fields: [Field]

    /// No fields.
    package init() {
        bytes = [0]
        fields = []
    }

    /// A list the transcoder wrote (checked as it was written).
    init(bytes: [UInt8], fields: [Field]) {
        self.bytes = bytes
        self.fields = fields
    }

    /// How many fields.
    package var count: Int { fields.count }

    /// The names of the fields, in the list's order.
    package var names: [String] { fields.map(\.name) }

    /// The encoding of one field's value.
    package func value(named name: String) -> ArraySlice<UInt8>? {
        fields.first { $0.name == name }.map { bytes[$0.value] }
    }

    /// The field list stored as `bytes`, checked as ``FieldListCodec``
    /// checks it when it decodes (names non-empty, distinct and in order,
    /// every value well-formed, nesting within ``FieldValue/maximumNestingDepth``,
    /// nothing after the list), without building any value.
    ///
    /// - Throws: ``EncodedFieldsFailure`` at the offset of the first problem.
    package init(list bytes: [UInt8]) throws(EncodedFieldsFailure) {
        var reader = EncodedReader(bytes: bytes)
        let fields = try reader.fieldList(depth: FieldValue.maximumNestingDepth, keepingFields: true)
        if reader.position != bytes.count {
            throw .invalid(reason: "\(bytes.count - reader.position) unexpected trailing bytes", offset: reader.position)
        }
        self.bytes = bytes
        self.fields = fields
    }

    /// These fields with `changes` laid over them: a field of `changes`
    /// replaces the one of the same name (names compare as Swift strings,
    /// as a dictionary's merge does), the others are kept. The values are
    /// copied as encoded, once, into a list of the exact size.
    package func merging(_ changes: EncodedFields) -> EncodedFields {
        var sources: [(name: String, from: EncodedFields, value: Range<Int>)] = fields.map { (name: $0.name, from: self, value: $0.value) }
        var index = [String: Int](minimumCapacity: sources.count)
        for (offset, field) in fields.enumerated() { index[field.name] = offset }
        for field in changes.fields {
            if let offset = index[field.name] {
                sources[offset].from = changes
                sources[offset].value = field.value
            } else {
                index[field.name] = sources.count
                sources.append((name: field.name, from: changes, value: field.value))
            }
        }
        sources.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        var length = varintLength(UInt64(sources.count))
        for source in sources {
            length += varintLength(UInt64(source.name.utf8.count)) + source.name.utf8.count + source.value.count
        }
        var out: [UInt8] = []
        out.reserveCapacity(length)
        out.appendVarint(UInt64(sources.count))
        var merged: [Field] = []
        merged.reserveCapacity(sources.count)
        for source in sources {
            out.appendLengthPrefixed(source.name.utf8)
            let start = out.count
            out.append(contentsOf: source.from.bytes[source.value])
            merged.append(Field(name: source.name, value: start..<out.count))
        }
        return EncodedFields(bytes: out, fields: merged)
    }

    /// The values as ``FieldValue``s, for a caller that holds small fields
    /// (tests, and storages that answer with ``ServerRow``s).
    package func decoded() -> [String: FieldValue] {
        var reader = EncodedReader(bytes: bytes)
        var result = [String: FieldValue](minimumCapacity: fields.count)
        for field in fields {
            reader.position = field.value.lowerBound
            result[field.name] = reader.checkedValue()
        }
        return result
    }

    // MARK: JSON

    /// Appends the JSON object of the field list: what
    /// ``FieldValueCodec/encode(fields:)`` then ``JSONValue/encoded()`` give
    /// for the same values.
    func writeJSON<Sink: ByteSink>(to out: inout Sink) {
        out.append(UInt8(ascii: "{"))
        var reader = EncodedReader(bytes: bytes)
        for (index, field) in fields.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONValue.writeString(field.name, to: &out)
            out.append(UInt8(ascii: ":"))
            reader.position = field.value.lowerBound
            reader.writeCheckedValueJSON(to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}

/// Why a stored field list is not one the server could have written.
package enum EncodedFieldsFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, and the byte offset in the list where it was found.
    case invalid(reason: String, offset: Int)

    package var description: String {
        switch self {
        case .invalid(let reason, let offset): return "\(reason) at byte \(offset)"
        }
    }
}

/// A cursor over field-codec bytes: checking reads for stored bytes, and
/// unchecked walks (`checked…`) over bytes already checked or written by
/// the transcoder.
struct EncodedReader {
    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    // MARK: Checking reads

    private mutating func byte() throws(EncodedFieldsFailure) -> UInt8 {
        guard position < bytes.count else { throw .invalid(reason: "the list ends early", offset: position) }
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func varint() throws(EncodedFieldsFailure) -> UInt64 {
        let start = position
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            if shift == 63 && next > 1 || shift > 63 { throw .invalid(reason: "a varint past 64 bits", offset: start) }
            value |= UInt64(next & 0x7F) << shift
            if next < 0x80 { return value }
            shift += 7
        }
    }

    /// A count or length no larger than what is left at `itemSize` bytes per item.
    private mutating func count(itemSize: Int) throws(EncodedFieldsFailure) -> Int {
        let start = position
        let raw = try varint()
        guard raw <= UInt64((bytes.count - position) / itemSize) else {
            throw .invalid(reason: "count \(raw) larger than the remaining list", offset: start)
        }
        return Int(raw)
    }

    /// The range of a length-prefixed run of bytes.
    private mutating func run() throws(EncodedFieldsFailure) -> Range<Int> {
        let length = try count(itemSize: 1)
        defer { position += length }
        return position..<(position + length)
    }

    /// The range of a length-prefixed string, checked to be UTF-8.
    private mutating func utf8Run() throws(EncodedFieldsFailure) -> Range<Int> {
        let start = position
        let range = try run()
        guard String(validating: bytes[range], as: UTF8.self) != nil else { throw .invalid(reason: "a string that is not UTF-8", offset: start) }
        return range
    }

    /// Checks a field list (an object's members one level down), returning
    /// its fields when `keepingFields`.
    mutating func fieldList(depth: Int, keepingFields: Bool) throws(EncodedFieldsFailure) -> [EncodedFields.Field] {
        let count = try count(itemSize: 2)
        var fields: [EncodedFields.Field] = []
        if keepingFields { fields.reserveCapacity(count) }
        var previous: Range<Int>?
        var names = Set<String>()
        for _ in 0..<count {
            let at = position
            let nameRange = try utf8Run()
            if nameRange.isEmpty { throw .invalid(reason: "an empty field name", offset: at) }
            if let previous, !bytes[previous].lexicographicallyPrecedes(bytes[nameRange]) {
                throw .invalid(reason: "field names out of order or repeated", offset: at)
            }
            previous = nameRange
            let name = String(decoding: bytes[nameRange], as: UTF8.self)
            // Distinct bytes can still be one Swift string (canonical equivalence).
            if !names.insert(name).inserted { throw .invalid(reason: "field names are canonically equivalent", offset: at) }
            let valueStart = position
            try skipValue(depth: depth)
            if keepingFields { fields.append(EncodedFields.Field(name: name, value: valueStart..<position)) }
        }
        return fields
    }

    /// Checks one value whose arrays and objects may nest `depth` deep.
    mutating func skipValue(depth: Int) throws(EncodedFieldsFailure) {
        let at = position
        switch try byte() {
        case 0, 1, 2: break
        case 3, 8: _ = try varint()
        case 4:
            guard bytes.count - position >= 8 else { throw .invalid(reason: "the list ends early", offset: position) }
            position += 8
        case 5: _ = try utf8Run()
        case 6: _ = try run()
        case 7:
            let count = try count(itemSize: 1)
            var previous: Range<Int>?
            var elements = Set<String>()
            for _ in 0..<count {
                let elementAt = position
                let element = try utf8Run()
                if let previous, !bytes[previous].lexicographicallyPrecedes(bytes[element]) {
                    throw .invalid(reason: "set elements out of order or repeated", offset: elementAt)
                }
                previous = element
                if !elements.insert(String(decoding: bytes[element], as: UTF8.self)).inserted {
                    throw .invalid(reason: "set elements are canonically equivalent", offset: elementAt)
                }
            }
        case 9:
            guard bytes.count - position >= 16 else { throw .invalid(reason: "the list ends early", offset: position) }
            position += 16
        case 10, 11:
            if depth <= 0 { throw .invalid(reason: "arrays and objects nested more than \(FieldValue.maximumNestingDepth) deep", offset: at) }
            if bytes[at] == 11 {
                _ = try fieldList(depth: depth - 1, keepingFields: false)
            } else {
                let count = try count(itemSize: 1)
                for _ in 0..<count { try skipValue(depth: depth - 1) }
            }
        case 12:
            guard bytes.count - position >= 32 else { throw .invalid(reason: "the list ends early", offset: position) }
            let hash = position
            position += 32
            let size = try varint()
            let typeStart = position
            let type = String(decoding: bytes[try utf8Run()], as: UTF8.self)
            guard size <= UInt64(Int64.max) else { throw .invalid(reason: "an attachment's size \(size) is past the largest Int64", offset: hash + 32) }
            let attachment = Attachment(content: ContentHash(bytes: Array(bytes[hash..<(hash + 32)]))!, size: Int64(size), mediaType: type)
            if let problem = attachment.problem { throw .invalid(reason: problem, offset: typeStart) }
        case let tag:
            throw .invalid(reason: "unknown field type \(tag)", offset: at)
        }
    }

    private mutating func checkedAttachment() -> Attachment {
        let hash = Array(bytes[position..<(position + 32)])
        position += 32
        let size = Int64(checkedVarint())
        let type = String(decoding: checkedRun(), as: UTF8.self)
        return Attachment(content: ContentHash(bytes: hash)!, size: size, mediaType: type)
    }

    // MARK: Walks over checked bytes

    private mutating func checkedByte() -> UInt8 {
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func checkedVarint() -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = checkedByte()
            value |= UInt64(next & 0x7F) << shift
            if next < 0x80 { return value }
            shift += 7
        }
    }

    private mutating func checkedZigzag() -> Int64 {
        let raw = checkedVarint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    private mutating func checkedUInt64() -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) { value |= UInt64(checkedByte()) << UInt64(shift) }
        return value
    }

    private mutating func checkedRun() -> ArraySlice<UInt8> {
        let length = Int(checkedVarint())
        defer { position += length }
        return bytes[position..<(position + length)]
    }

    private mutating func checkedUUID() -> UUID {
        let b = bytes[position..<(position + 16)].map { $0 }
        position += 16
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    /// The checked value at the position as a ``FieldValue``.
    mutating func checkedValue() -> FieldValue {
        switch checkedByte() {
        case 0: return .null
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3: return .int(checkedZigzag())
        case 4: return .double(Double(bitPattern: checkedUInt64()))
        case 5: return .string(String(decoding: checkedRun(), as: UTF8.self))
        case 6: return .bytes(Array(checkedRun()))
        case 7:
            let count = Int(checkedVarint())
            var set = Set<String>(minimumCapacity: count)
            for _ in 0..<count { set.insert(String(decoding: checkedRun(), as: UTF8.self)) }
            return .stringSet(set)
        case 8: return .timestamp(checkedZigzag())
        case 9: return .uuid(checkedUUID())
        case 10:
            let count = Int(checkedVarint())
            var elements: [FieldValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(checkedValue()) }
            return .array(elements)
        case 12: return .attachment(checkedAttachment())
        default:
            let count = Int(checkedVarint())
            var members = [String: FieldValue](minimumCapacity: count)
            for _ in 0..<count {
                let name = String(decoding: checkedRun(), as: UTF8.self)
                members[name] = checkedValue()
            }
            return .object(members)
        }
    }

    /// Appends the JSON of the checked value at the position: what
    /// `FieldValueCodec.write(_:to:)` appends for the value it encodes.
    mutating func writeCheckedValueJSON<Sink: ByteSink>(to out: inout Sink) {
        switch checkedByte() {
        case 0: out.append(contentsOf: "null".utf8)
        case 1: out.append(contentsOf: "false".utf8)
        case 2: out.append(contentsOf: "true".utf8)
        case 3: JSONValue.writeInteger(checkedZigzag(), to: &out)
        case 4:
            let number = Double(bitPattern: checkedUInt64())
            if number.isFinite {
                JSONValue.writeNumber(number, to: &out)
            } else {
                out.append(contentsOf: #"{"double":"#.utf8)
                JSONValue.writeString(number.isNaN ? "nan" : (number > 0 ? "inf" : "-inf"), to: &out)
                out.append(UInt8(ascii: "}"))
            }
        case 5: JSONValue.writeString(utf8: checkedRun(), to: &out)
        case 6:
            out.append(contentsOf: #"{"bytes":"#.utf8)
            JSONValue.writeString(Base64.encode(Array(checkedRun())), to: &out)
            out.append(UInt8(ascii: "}"))
        case 7:
            // Stored in ascending byte order, the order the JSON lists them in.
            out.append(contentsOf: #"{"set":["#.utf8)
            let count = Int(checkedVarint())
            for index in 0..<count {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.writeString(utf8: checkedRun(), to: &out)
            }
            out.append(contentsOf: "]}".utf8)
        case 8:
            out.append(contentsOf: #"{"timestamp":"#.utf8)
            JSONValue.writeInteger(checkedZigzag(), to: &out)
            out.append(UInt8(ascii: "}"))
        case 9:
            out.append(contentsOf: #"{"uuid":"#.utf8)
            JSONValue.writeString(checkedUUID().uuidString.lowercased(), to: &out)
            out.append(UInt8(ascii: "}"))
        case 10:
            out.append(contentsOf: #"{"array":["#.utf8)
            let count = Int(checkedVarint())
            for index in 0..<count {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeCheckedValueJSON(to: &out)
            }
            out.append(contentsOf: "]}".utf8)
        case 12:
            var json: [UInt8] = []
            FieldValueCodec.write(.attachment(checkedAttachment()), to: &json)
            out.append(contentsOf: json)
        default:
            // Members are stored in ascending byte order of their names, the JSON's order.
            out.append(contentsOf: #"{"object":{"#.utf8)
            let count = Int(checkedVarint())
            for index in 0..<count {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.writeString(utf8: checkedRun(), to: &out)
                out.append(UInt8(ascii: ":"))
                writeCheckedValueJSON(to: &out)
            }
            out.append(contentsOf: "}}".utf8)
        }
    }
}

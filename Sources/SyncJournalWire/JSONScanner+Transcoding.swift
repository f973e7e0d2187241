#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncJournalProtocol

/// Field values turned straight from a message's bytes (checked first by
/// ``JSONScanner/validateDocument()``) into the field codec's encoding, by
/// the rules of ``JSONScanner/decodeFields(depth:path:)``: the same
/// refusals with the same errors, but no ``FieldValue`` is built. A value
/// is walked twice: once into a ``ByteCounter``, which meets every error in
/// the order the decoder would, and once into an array reserved at the
/// counted size, so the encoding is never larger than it ends up.
extension JSONScanner {
    /// The field list at the position in the field codec's encoding.
    mutating func transcodeFields(path: () -> String) throws(WireError) -> EncodedFields {
        guard bytes[position] == UInt8(ascii: "{") else { throw .wrongType(path: path(), expected: "an object of fields") }
        let count = countElements()
        var found: [(name: String, at: Int, length: Int)] = []
        found.reserveCapacity(count)
        for _ in 0..<count {
            skipWhitespace()
            let name = try parseString()
            skipSeparator()
            if name.isEmpty { throw .invalidValue(path: JSONPath.member(path(), name), reason: "an empty field name") }
            let at = position
            var counter = ByteCounter()
            try transcodeFieldValue(depth: FieldValue.maximumNestingDepth, path: { JSONPath.member(path(), name) }, into: &counter)
            found.append((name, at, counter.count))
            skipSeparator()
        }
        if count == 0 { skipSeparator() }
        let end = position
        found.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        var length = varintLength(UInt64(found.count))
        for field in found { length += varintLength(UInt64(field.name.utf8.count)) + field.name.utf8.count + field.length }
        var out: [UInt8] = []
        out.reserveCapacity(length)
        out.appendVarint(UInt64(found.count))
        var fields: [EncodedFields.Field] = []
        fields.reserveCapacity(found.count)
        for field in found {
            out.appendLengthPrefixed(field.name.utf8)
            let start = out.count
            position = field.at
            try transcodeFieldValue(depth: FieldValue.maximumNestingDepth, path: { JSONPath.member(path(), field.name) }, into: &out)
            fields.append(EncodedFields.Field(name: field.name, value: start..<out.count))
        }
        position = end
        return EncodedFields(bytes: out, fields: fields)
    }

    /// Writes the encoding of the field value at the position, whose arrays and objects may nest `depth` deep.
    mutating func transcodeFieldValue<Sink: ByteSink>(depth: Int, path: () -> String, into out: inout Sink) throws(WireError) {
        switch bytes[position] {
        case UInt8(ascii: "{"):
            try transcodeTaggedValue(depth: depth, path: path, into: &out)
        case UInt8(ascii: "["):
            throw .wrongType(path: path(), expected: "a field value (arrays are written {\"array\": [...]}, sets {\"set\": [...]})")
        case UInt8(ascii: "\""):
            out.append(5)
            out.appendLengthPrefixed(try parseStringBytes())
        default:
            // A scalar other than a string: parsing it builds nothing.
            switch try parseValue(depth: 0) {
            case .null: out.append(0)
            case .bool(let flag): out.append(flag ? 2 : 1)
            case .integer(let number):
                out.append(3)
                out.appendZigzag(number)
            case .number(let number):
                out.append(4)
                out.appendUInt64(number.bitPattern)
            case .string(let text):
                out.append(5)
                out.appendLengthPrefixed(text.utf8)
            case .array, .object: throw .wrongType(path: path(), expected: "a field value")
            }
        }
    }

    /// `{"TAG": INNER}`: a double that is not finite, bytes, a set, a timestamp, a UUID, an array or an object.
    private mutating func transcodeTaggedValue<Sink: ByteSink>(depth: Int, path: () -> String, into out: inout Sink) throws(WireError) {
        let start = position
        guard skipCheckedValue() == 1 else {
            throw .invalidValue(path: path(), reason: "an object field value has exactly one member: double, bytes, set, timestamp, uuid, array, object or attachment")
        }
        let end = position
        position = start + 1
        skipWhitespace()
        let tag = try parseString()
        skipSeparator()
        try transcodeTagged(tag, depth: depth, path: { JSONPath.member(path(), tag) }, into: &out)
        position = end
    }

    private mutating func transcodeTagged<Sink: ByteSink>(_ tag: String, depth: Int, path: () -> String,
                                                          into out: inout Sink) throws(WireError) {
        let first = bytes[position]
        switch tag {
        case "double":
            guard first == UInt8(ascii: "\"") else { throw .wrongType(path: path(), expected: "\"nan\", \"inf\" or \"-inf\"") }
            let text = try parseString()
            let number: Double
            switch text {
            case "nan": number = .nan
            case "inf": number = .infinity
            case "-inf": number = -.infinity
            default: throw .invalidValue(path: path(), reason: "\"\(text)\" is not nan, inf or -inf (finite doubles are plain numbers)")
            }
            out.append(4)
            out.appendUInt64(number.bitPattern)
        case "bytes":
            guard first == UInt8(ascii: "\"") else { throw .wrongType(path: path(), expected: "a base64 string") }
            switch Base64.decode(try parseString()) {
            case .success(let bytes):
                out.append(6)
                out.appendLengthPrefixed(bytes)
            case .failure(let failure): throw .invalidValue(path: path(), reason: failure.description)
            }
        case "set":
            guard first == UInt8(ascii: "[") else { throw .wrongType(path: path(), expected: "an array of strings") }
            let count = countElements()
            var set = Set<String>(minimumCapacity: count)
            var elements: [String] = []
            elements.reserveCapacity(count)
            for index in 0..<count {
                skipWhitespace()
                guard bytes[position] == UInt8(ascii: "\"") else {
                    throw .wrongType(path: JSONPath.element(path(), index), expected: "a string")
                }
                // Swift compares strings by canonical equivalence: two spellings
                // of one string are one element, so they count as a repeat.
                let element = try parseString()
                if !set.insert(element).inserted {
                    throw .invalidValue(path: JSONPath.element(path(), index), reason: "a repeated set element")
                }
                elements.append(element)
                skipSeparator()
            }
            if count == 0 { skipSeparator() }
            elements.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            out.append(7)
            out.appendVarint(UInt64(elements.count))
            for element in elements { out.appendLengthPrefixed(element.utf8) }
        case "timestamp":
            let number: JSONValue? = first == UInt8(ascii: "-") || isDigit(first) ? try parseNumber() : nil
            guard case .integer(let microseconds)? = number else {
                throw .wrongType(path: path(), expected: "an integer (microseconds since 1970)")
            }
            out.append(8)
            out.appendZigzag(microseconds)
        case "uuid":
            guard first == UInt8(ascii: "\"") else { throw .wrongType(path: path(), expected: "a UUID string") }
            let text = try parseString()
            guard let value = UUID(uuidString: text), value.uuidString.lowercased() == text else {
                throw .invalidValue(path: path(), reason: "\"\(text)\" is not a UUID in lowercase 8-4-4-4-12 hex")
            }
            let b = value.uuid
            out.append(9)
            out.append(contentsOf: [b.0, b.1, b.2, b.3, b.4, b.5, b.6, b.7, b.8, b.9, b.10, b.11, b.12, b.13, b.14, b.15])
        case "attachment":
            let attachment = try FieldValueCodec.decodeAttachment(try parseValue(depth: 2), at: path())
            // Tag 12: the 32 hash bytes, the size as a varint, the media type (journals/FORMAT.md, section 4).
            out.append(12)
            out.append(contentsOf: attachment.content.bytes)
            out.appendVarint(UInt64(attachment.size))
            out.appendLengthPrefixed(attachment.mediaType.utf8)
        case "array", "object":
            if depth <= 0 {
                throw .invalidValue(path: path(), reason: "arrays and objects nested more than \(FieldValue.maximumNestingDepth) deep")
            }
            if tag == "object" {
                out.append(11)
                try transcodeMembers(depth: depth - 1, path: path, into: &out)
                return
            }
            guard first == UInt8(ascii: "[") else { throw .wrongType(path: path(), expected: "an array of field values") }
            let count = countElements()
            out.append(10)
            out.appendVarint(UInt64(count))
            for index in 0..<count {
                skipWhitespace()
                try transcodeFieldValue(depth: depth - 1, path: { JSONPath.element(path(), index) }, into: &out)
                skipSeparator()
            }
            if count == 0 { skipSeparator() }
        default:
            throw .unknownMember(path: path())
        }
    }

    /// An object's members as a field list, in ascending byte order of
    /// their names. Counting meets the members in the message's order (so
    /// errors come as the decoder's do) and needs no order; writing notes
    /// where each member's value lies, then writes them in order.
    private mutating func transcodeMembers<Sink: ByteSink>(depth: Int, path: () -> String, into out: inout Sink) throws(WireError) {
        guard bytes[position] == UInt8(ascii: "{") else { throw .wrongType(path: path(), expected: "an object of fields") }
        let count = countElements()
        out.appendVarint(UInt64(count))
        var found: [(name: String, at: Int)] = []
        if !Sink.countsOnly { found.reserveCapacity(count) }
        for _ in 0..<count {
            skipWhitespace()
            let name = try parseString()
            skipSeparator()
            if name.isEmpty { throw .invalidValue(path: JSONPath.member(path(), name), reason: "an empty field name") }
            if Sink.countsOnly {
                out.appendLengthPrefixed(name.utf8)
                try transcodeFieldValue(depth: depth, path: { JSONPath.member(path(), name) }, into: &out)
            } else {
                found.append((name, position))
                _ = skipCheckedValue()
            }
            skipSeparator()
        }
        if count == 0 { skipSeparator() }
        if Sink.countsOnly { return }
        let end = position
        found.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        for member in found {
            out.appendLengthPrefixed(member.name.utf8)
            position = member.at
            try transcodeFieldValue(depth: depth, path: { JSONPath.member(path(), member.name) }, into: &out)
        }
        position = end
    }

    /// The UTF-8 bytes of the checked string at the position: a slice of
    /// the message when it has no escapes (so a large string is not
    /// copied), else the unescaped bytes.
    mutating func parseStringBytes() throws(WireError) -> ArraySlice<UInt8> {
        let start = position + 1
        var scan = start
        while true {
            let byte = bytes[scan]
            if byte == UInt8(ascii: "\"") {
                position = scan + 1
                return bytes[start..<scan]
            }
            if byte == UInt8(ascii: "\\") { break }
            scan += 1
        }
        return ArraySlice(Array(try parseString().utf8))
    }
}

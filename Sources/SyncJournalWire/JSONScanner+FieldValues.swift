#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncJournalProtocol

/// Field values read straight from a message's bytes (checked first by
/// ``JSONScanner/validateDocument()``), by the rules of
/// ``FieldValueCodec/decode(_:at:)``: the same values and the same errors,
/// without a ``JSONValue`` tree in between. A large array of numbers would
/// otherwise cost a boxed JSON value per element and then a field value per
/// element; here each array is counted first and built once at its final
/// size, and an error's path is made only when there is an error.
extension JSONScanner {
    /// The field list at the position, whose values' arrays and objects may nest `depth` deep.
    mutating func decodeFields(depth: Int, path: () -> String) throws(WireError) -> [String: FieldValue] {
        guard bytes[position] == UInt8(ascii: "{") else { throw .wrongType(path: path(), expected: "an object of fields") }
        let start = position
        let count = skipCheckedValue()
        position = start + 1
        var fields = [String: FieldValue](minimumCapacity: count)
        for _ in 0..<count {
            skipWhitespace()
            let name = try parseString()
            skipSeparator()
            if name.isEmpty { throw .invalidValue(path: JSONPath.member(path(), name), reason: "an empty field name") }
            fields[name] = try decodeFieldValue(depth: depth, path: { JSONPath.member(path(), name) })
            skipSeparator()
        }
        if count == 0 { skipSeparator() }
        return fields
    }

    /// The field value at the position, whose arrays and objects may nest `depth` deep.
    mutating func decodeFieldValue(depth: Int, path: () -> String) throws(WireError) -> FieldValue {
        switch bytes[position] {
        case UInt8(ascii: "{"):
            return try decodeTaggedValue(depth: depth, path: path)
        case UInt8(ascii: "["):
            throw .wrongType(path: path(), expected: "a field value (arrays are written {\"array\": [...]}, sets {\"set\": [...]})")
        default:
            // A scalar: parsing it builds nothing nested.
            switch try parseValue(depth: 0) {
            case .null: return .null
            case .bool(let flag): return .bool(flag)
            case .integer(let number): return .int(number)
            case .number(let number): return .double(number)
            case .string(let text): return .string(text)
            case .array, .object: throw .wrongType(path: path(), expected: "a field value")
            }
        }
    }

    /// `{"TAG": INNER}`: a double that is not finite, bytes, a set, a timestamp, a UUID, an array or an object.
    private mutating func decodeTaggedValue(depth: Int, path: () -> String) throws(WireError) -> FieldValue {
        let start = position
        guard skipCheckedValue() == 1 else {
            throw .invalidValue(path: path(), reason: "an object field value has exactly one member: double, bytes, set, timestamp, uuid, array, object or attachment")
        }
        let end = position
        position = start + 1
        skipWhitespace()
        let tag = try parseString()
        skipSeparator()
        let value = try decodeTagged(tag, depth: depth, path: { JSONPath.member(path(), tag) })
        position = end
        return value
    }

    private mutating func decodeTagged(_ tag: String, depth: Int, path: () -> String) throws(WireError) -> FieldValue {
        let first = bytes[position]
        switch tag {
        case "double":
            guard first == UInt8(ascii: "\"") else { throw .wrongType(path: path(), expected: "\"nan\", \"inf\" or \"-inf\"") }
            let text = try parseString()
            switch text {
            case "nan": return .double(.nan)
            case "inf": return .double(.infinity)
            case "-inf": return .double(-.infinity)
            default: throw .invalidValue(path: path(), reason: "\"\(text)\" is not nan, inf or -inf (finite doubles are plain numbers)")
            }
        case "bytes":
            guard first == UInt8(ascii: "\"") else { throw .wrongType(path: path(), expected: "a base64 string") }
            switch Base64.decode(try parseString()) {
            case .success(let bytes): return .bytes(bytes)
            case .failure(let failure): throw .invalidValue(path: path(), reason: failure.description)
            }
        case "set":
            guard first == UInt8(ascii: "[") else { throw .wrongType(path: path(), expected: "an array of strings") }
            let count = countElements()
            var set = Set<String>(minimumCapacity: count)
            for index in 0..<count {
                skipWhitespace()
                guard bytes[position] == UInt8(ascii: "\"") else {
                    throw .wrongType(path: JSONPath.element(path(), index), expected: "a string")
                }
                // Swift compares strings by canonical equivalence: two spellings
                // of one string are one element, so they count as a repeat.
                if !set.insert(try parseString()).inserted {
                    throw .invalidValue(path: JSONPath.element(path(), index), reason: "a repeated set element")
                }
                skipSeparator()
            }
            if count == 0 { skipSeparator() }
            return .stringSet(set)
        case "timestamp":
            let number: JSONValue? = first == UInt8(ascii: "-") || isDigit(first) ? try parseNumber() : nil
            guard case .integer(let microseconds)? = number else {
                throw .wrongType(path: path(), expected: "an integer (microseconds since 1970)")
            }
            return .timestamp(microseconds)
        case "uuid":
            guard first == UInt8(ascii: "\"") else { throw .wrongType(path: path(), expected: "a UUID string") }
            let text = try parseString()
            guard let value = UUID(uuidString: text), value.uuidString.lowercased() == text else {
                throw .invalidValue(path: path(), reason: "\"\(text)\" is not a UUID in lowercase 8-4-4-4-12 hex")
            }
            return .uuid(value)
        case "attachment":
            return .attachment(try FieldValueCodec.decodeAttachment(try parseValue(depth: 2), at: path()))
        case "array", "object":
            if depth <= 0 {
                throw .invalidValue(path: path(), reason: "arrays and objects nested more than \(FieldValue.maximumNestingDepth) deep")
            }
            if tag == "object" { return .object(try decodeFields(depth: depth - 1, path: path)) }
            guard first == UInt8(ascii: "[") else { throw .wrongType(path: path(), expected: "an array of field values") }
            let count = countElements()
            var elements: [FieldValue] = []
            elements.reserveCapacity(count)
            for index in 0..<count {
                skipWhitespace()
                elements.append(try decodeFieldValue(depth: depth - 1, path: { JSONPath.element(path(), index) }))
                skipSeparator()
            }
            if count == 0 { skipSeparator() }
            return .array(elements)
        default:
            throw .unknownMember(path: path())
        }
    }

    /// How many elements (members) the checked array (object) at the
    /// position holds; the position is then just inside its bracket.
    mutating func countElements() -> Int {
        let start = position
        let count = skipCheckedValue()
        position = start + 1
        return count
    }

    /// Moves over whitespace, one separator (`,` `:` or a closing bracket) and whitespace, in checked bytes.
    mutating func skipSeparator() {
        skipWhitespace()
        if position < bytes.count { position += 1 }
        skipWhitespace()
    }
}

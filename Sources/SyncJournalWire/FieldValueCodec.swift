#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncJournalProtocol

/// The JSON of a ``FieldValue`` and of a field list (`journals/PROTOCOL.md`,
/// "Values"): integers as integer literals, finite doubles as numbers with a
/// fraction or exponent, non-finite ones as `{"double": "nan"}`, bytes as
/// `{"bytes": BASE64}`, sets as `{"set": [...]}` sorted by UTF-8 bytes,
/// timestamps as `{"timestamp": MICROSECONDS}`, UUIDs as `{"uuid": "lowercase-hex"}`,
/// arrays as `{"array": [...]}`, objects as `{"object": {...}}` and attachments as
/// `{"attachment": {"sha256": HEX, "size": BYTES, "type": "MEDIA/TYPE"}}`.
///
/// A NaN is written as `"nan"` whatever its payload, so it reads back as
/// `Double.nan`.
///
/// ```swift
/// FieldValueCodec.encode(.bytes([0, 1, 2]))     // {"bytes":"AAEC"}
/// let value = try FieldValueCodec.decode(.integer(-42), at: "$.grade")   // .int(-42)
/// ```
public enum FieldValueCodec {
    /// The JSON of one value.
    public static func encode(_ value: FieldValue) -> JSONValue {
        switch value {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .int(let number): return .integer(number)
        case .double(let number):
            if number.isFinite { return .number(number) }
            return .object(["double": .string(number.isNaN ? "nan" : (number > 0 ? "inf" : "-inf"))])
        case .string(let text): return .string(text)
        case .bytes(let bytes): return .object(["bytes": .string(Base64.encode(bytes))])
        case .stringSet(let set):
            let sorted = set.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            return .object(["set": .array(sorted.map { .string($0) })])
        case .timestamp(let microseconds): return .object(["timestamp": .integer(microseconds)])
        case .uuid(let value): return .object(["uuid": .string(value.uuidString.lowercased())])
        case .array(let elements): return .object(["array": .array(elements.map { encode($0) })])
        case .object(let members): return .object(["object": encode(fields: members)])
        case .attachment(let attachment):
            return .object(["attachment": .object(["sha256": .string(attachment.content.hex), "size": .integer(attachment.size),
                                                    "type": .string(attachment.mediaType)])])
        }
    }

    /// The value `json` (found at `path`) stands for.
    ///
    /// - Throws: ``WireError`` naming `path` (or a path below it).
    public static func decode(_ json: JSONValue, at path: String) throws(WireError) -> FieldValue {
        try decode(json, at: path, depth: FieldValue.maximumNestingDepth)
    }

    /// The value `json` stands for, whose arrays and objects may nest `depth` deep.
    private static func decode(_ json: JSONValue, at path: String, depth: Int) throws(WireError) -> FieldValue {
        switch json {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .integer(let number): return .int(number)
        case .number(let number): return .double(number)
        case .string(let text): return .string(text)
        case .array: throw .wrongType(path: path, expected: "a field value (arrays are written {\"array\": [...]}, sets {\"set\": [...]})")
        case .object(let members):
            guard members.count == 1, let member = members.first else {
                throw .invalidValue(path: path, reason: "an object field value has exactly one member: double, bytes, set, timestamp, uuid, array, object or attachment")
            }
            let (tag, inner) = (member.key, member.value)
            let innerPath = JSONPath.member(path, tag)
            switch tag {
            case "double":
                guard case .string(let text) = inner else { throw .wrongType(path: innerPath, expected: "\"nan\", \"inf\" or \"-inf\"") }
                switch text {
                case "nan": return .double(.nan)
                case "inf": return .double(.infinity)
                case "-inf": return .double(-.infinity)
                default: throw .invalidValue(path: innerPath, reason: "\"\(text)\" is not nan, inf or -inf (finite doubles are plain numbers)")
                }
            case "bytes":
                guard case .string(let text) = inner else { throw .wrongType(path: innerPath, expected: "a base64 string") }
                switch Base64.decode(text) {
                case .success(let bytes): return .bytes(bytes)
                case .failure(let failure): throw .invalidValue(path: innerPath, reason: failure.description)
                }
            case "set":
                guard case .array(let items) = inner else { throw .wrongType(path: innerPath, expected: "an array of strings") }
                var set = Set<String>(minimumCapacity: items.count)
                for (index, item) in items.enumerated() {
                    let itemPath = JSONPath.element(innerPath, index)
                    guard case .string(let element) = item else { throw .wrongType(path: itemPath, expected: "a string") }
                    // Swift compares strings by canonical equivalence: two spellings
                    // of one string are one element, so they count as a repeat.
                    if !set.insert(element).inserted { throw .invalidValue(path: itemPath, reason: "a repeated set element") }
                }
                return .stringSet(set)
            case "timestamp":
                guard case .integer(let microseconds) = inner else { throw .wrongType(path: innerPath, expected: "an integer (microseconds since 1970)") }
                return .timestamp(microseconds)
            case "uuid":
                guard case .string(let text) = inner else { throw .wrongType(path: innerPath, expected: "a UUID string") }
                guard let value = UUID(uuidString: text), value.uuidString.lowercased() == text else {
                    throw .invalidValue(path: innerPath, reason: "\"\(text)\" is not a UUID in lowercase 8-4-4-4-12 hex")
                }
                return .uuid(value)
            case "attachment":
                return .attachment(try decodeAttachment(inner, at: innerPath))
            case "array", "object":
                if depth <= 0 {
                    throw .invalidValue(path: innerPath, reason: "arrays and objects nested more than \(FieldValue.maximumNestingDepth) deep")
                }
                if tag == "object" { return .object(try decodeFields(inner, at: innerPath, depth: depth - 1)) }
                guard case .array(let items) = inner else { throw .wrongType(path: innerPath, expected: "an array of field values") }
                var elements: [FieldValue] = []
                elements.reserveCapacity(items.count)
                for (index, item) in items.enumerated() {
                    elements.append(try decode(item, at: JSONPath.element(innerPath, index), depth: depth - 1))
                }
                return .array(elements)
            default:
                throw .unknownMember(path: innerPath)
            }
        }
    }

    /// An attachment's `{"sha256": HEX, "size": BYTES, "type": "MEDIA/TYPE"}` (all three members, no others).
    static func decodeAttachment(_ json: JSONValue, at path: String) throws(WireError) -> Attachment {
        guard case .object(let members) = json else { throw .wrongType(path: path, expected: "an object with sha256, size and type") }
        for name in members.keys where !["sha256", "size", "type"].contains(name) { throw .unknownMember(path: JSONPath.member(path, name)) }
        let hashPath = JSONPath.member(path, "sha256")
        guard case .string(let hex)? = members["sha256"] else { throw .wrongType(path: hashPath, expected: "64 lowercase hex digits") }
        guard let content = ContentHash(hex) else { throw .invalidValue(path: hashPath, reason: "\"\(hex)\" is not 64 lowercase hex digits") }
        let sizePath = JSONPath.member(path, "size")
        guard case .integer(let size)? = members["size"] else { throw .wrongType(path: sizePath, expected: "a non-negative integer") }
        let typePath = JSONPath.member(path, "type")
        guard case .string(let type)? = members["type"] else { throw .wrongType(path: typePath, expected: "a media type such as image/jpeg") }
        let attachment = Attachment(content: content, size: size, mediaType: type)
        if let problem = attachment.problem { throw .invalidValue(path: size < 0 ? sizePath : typePath, reason: problem) }
        return attachment
    }

    /// The JSON object of a field list.
    public static func encode(fields: [String: FieldValue]) -> JSONValue {
        .object(fields.mapValues { encode($0) })
    }

    /// The field list `json` (found at `path`) stands for; names must be non-empty.
    public static func decodeFields(_ json: JSONValue, at path: String) throws(WireError) -> [String: FieldValue] {
        try decodeFields(json, at: path, depth: FieldValue.maximumNestingDepth)
    }

    /// The field list `json` stands for, whose values' arrays and objects may nest `depth` deep.
    private static func decodeFields(_ json: JSONValue, at path: String, depth: Int) throws(WireError) -> [String: FieldValue] {
        guard case .object(let members) = json else { throw .wrongType(path: path, expected: "an object of fields") }
        var fields = [String: FieldValue](minimumCapacity: members.count)
        for (name, value) in members {
            let fieldPath = JSONPath.member(path, name)
            if name.isEmpty { throw .invalidValue(path: fieldPath, reason: "an empty field name") }
            fields[name] = try decode(value, at: fieldPath, depth: depth)
        }
        return fields
    }
}

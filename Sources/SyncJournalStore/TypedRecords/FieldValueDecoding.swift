#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncJournalProtocol

/// The `Decoder` a value decodes itself from: one field value and where it was found.
struct FieldValueDecoding: Decoder {
    let value: FieldValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            throw Self.mismatch([String: FieldValue].self, expected: "an object", found: value, at: codingPath)
        }
        return KeyedDecodingContainer(FieldKeyedDecodingContainer<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch value {
        case .array(let elements): return FieldUnkeyedDecodingContainer(elements: elements, codingPath: codingPath)
        case .stringSet(let set):
            let sorted = set.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            return FieldUnkeyedDecodingContainer(elements: sorted.map { .string($0) }, codingPath: codingPath)
        default:
            throw Self.mismatch([FieldValue].self, expected: "an array", found: value, at: codingPath)
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        FieldSingleValueDecodingContainer(value: value, codingPath: codingPath)
    }

    /// `value`, found at `path`, as a `Value`: the types with a field value of their own
    /// directly, any other by letting it decode itself.
    static func unbox<Value: Decodable>(_ value: FieldValue, as type: Value.Type, at path: [any CodingKey]) throws -> Value {
        if type == Date.self {
            guard let date = value.date else { throw mismatch(type, expected: "a timestamp", found: value, at: path) }
            return date as! Value
        }
        if type == UUID.self {
            switch value {
            case .uuid(let uuid): return uuid as! Value
            case .string(let text):
                if let uuid = UUID(uuidString: text) { return uuid as! Value }
            default: break
            }
            throw mismatch(type, expected: "a UUID", found: value, at: path)
        }
        if type == Data.self {
            guard case .bytes(let bytes) = value else { throw mismatch(type, expected: "bytes", found: value, at: path) }
            return Data(bytes) as! Value
        }
        if type == Attachment.self {
            guard case .attachment(let attachment) = value else { throw mismatch(type, expected: "an attachment", found: value, at: path) }
            return attachment as! Value
        }
        if type == Set<String>.self, case .stringSet(let set) = value { return set as! Value }
        if type == URL.self { return try url(value, at: path) as! Value }
        if type == Decimal.self { return try decimal(value, at: path) as! Value }
        return try Value(from: FieldValueDecoding(value: value, codingPath: path))
    }

    /// `value` as a `URL`: its absolute text, or the keyed form Foundation's own encoding
    /// wrote before URLs were stored as text.
    static func url(_ value: FieldValue, at path: [any CodingKey]) throws -> URL {
        switch value {
        case .string(let text):
            guard let url = URL(string: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\"\(text)\" is not a URL"))
            }
            return url
        case .object: return try URL(from: FieldValueDecoding(value: value, codingPath: path))
        default: throw mismatch(URL.self, expected: "a URL string", found: value, at: path)
        }
    }

    /// `value` as a `Decimal`: exactly from its decimal text (as the encoder stores it) or an
    /// int64; from a double, the decimal of its shortest text, which may differ from the
    /// binary value; from the keyed form Foundation's own encoding wrote before.
    static func decimal(_ value: FieldValue, at path: [any CodingKey]) throws -> Decimal {
        switch value {
        case .string(let text):
            guard let decimal = DecimalText.decimal(text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\"\(text)\" is not a decimal number"))
            }
            return decimal
        case .int(let number): return Decimal(number)
        case .double(let number):
            guard number.isFinite, let decimal = DecimalText.decimal(number.description) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(number) is not a decimal number"))
            }
            return decimal
        case .object: return try Decimal(from: FieldValueDecoding(value: value, codingPath: path))
        default: throw mismatch(Decimal.self, expected: "a decimal string", found: value, at: path)
        }
    }

    /// The error of a value of the wrong type.
    static func mismatch(_ type: Any.Type, expected: String, found value: FieldValue, at path: [any CodingKey]) -> DecodingError {
        if case .null = value {
            return .valueNotFound(type, .init(codingPath: path, debugDescription: "expected \(expected), found null"))
        }
        return .typeMismatch(type, .init(codingPath: path, debugDescription: "expected \(expected), found \(value.typeName)"))
    }

    /// `value` as a `Bool`.
    static func bool(_ value: FieldValue, at path: [any CodingKey]) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, expected: "a bool", found: value, at: path) }
        return flag
    }

    /// `value` as a `String`.
    static func string(_ value: FieldValue, at path: [any CodingKey]) throws -> String {
        guard case .string(let text) = value else { throw mismatch(String.self, expected: "a string", found: value, at: path) }
        return text
    }

    /// `value` as a `Double` (an int64 converts when the double holds it exactly).
    static func double(_ value: FieldValue, at path: [any CodingKey]) throws -> Double {
        switch value {
        case .double(let number): return number
        case .int(let number):
            if let exact = Double(exactly: number) { return exact }
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(number) has no exact double"))
        default: throw mismatch(Double.self, expected: "a double", found: value, at: path)
        }
    }

    /// `value` as an integer of type `Value`, if it fits: an int64, or a double that is a
    /// whole number (a newer version of the app may store `4.0` where this one has an `Int`).
    static func integer<Value: FixedWidthInteger>(_ value: FieldValue, as type: Value.Type, at path: [any CodingKey]) throws -> Value {
        switch value {
        case .int(let number):
            guard let exact = Value(exactly: number) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(number) does not fit in \(Value.self)"))
            }
            return exact
        case .double(let number):
            guard number.isFinite, number == number.rounded(.towardZero) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(number) is not a whole number"))
            }
            guard let exact = Value(exactly: number) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(number) does not fit in \(Value.self)"))
            }
            return exact
        default:
            throw mismatch(type, expected: "an int64", found: value, at: path)
        }
    }
}

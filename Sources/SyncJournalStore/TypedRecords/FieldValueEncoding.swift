#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncJournalProtocol

/// The `Encoder` a value encodes itself to: it fills one slot.
struct FieldValueEncoding: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    let slot: EncodedSlot

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(FieldKeyedEncodingContainer<Key>(codingPath: codingPath, slot: slot.keyed()))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        FieldUnkeyedEncodingContainer(codingPath: codingPath, slot: slot.unkeyed())
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        FieldSingleValueEncodingContainer(codingPath: codingPath, slot: slot)
    }

    /// The field value of `value` found at `path`: the types with a field value of their own
    /// directly, any other by letting it encode itself.
    static func box<Value: Encodable>(_ value: Value, at path: [any CodingKey]) throws -> FieldValue {
        switch value {
        case let date as Date: return .timestamp(date)
        case let uuid as UUID: return .uuid(uuid)
        case let data as Data: return .bytes(Array(data))
        case let attachment as Attachment: return .attachment(attachment)
        case let set as Set<String>: return .stringSet(set)
        // Foundation would encode these two as keyed parts (a URL's base and relative text,
        // a decimal's mantissa words); their text is what another client or a server can read.
        case let url as URL: return .string(url.absoluteString)
        case let decimal as Decimal: return .string(decimal.description)
        default: break
        }
        // Each container level adds one to the path; stopping here bounds the recursion
        // of a type that nests without end.
        if path.count > FieldValue.maximumNestingDepth {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "arrays and objects nest more than \(FieldValue.maximumNestingDepth) deep"))
        }
        let slot = EncodedSlot()
        try value.encode(to: FieldValueEncoding(codingPath: path, slot: slot))
        return slot.value
    }

    /// `value` as an int64, or the error naming `path`.
    static func integer<Value: BinaryInteger>(_ value: Value, at path: [any CodingKey]) throws -> FieldValue {
        guard let exact = Int64(exactly: value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "\(value) does not fit in a 64-bit signed integer"))
        }
        return .int(exact)
    }
}

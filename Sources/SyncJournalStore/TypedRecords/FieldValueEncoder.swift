#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncJournalProtocol

/// Encodes `Encodable` values as field values: a struct becomes a field list, or an
/// ``FieldValue/object(_:)`` when nested.
///
/// | Swift | field value |
/// |---|---|
/// | `Bool` | ``FieldValue/bool(_:)`` |
/// | `Int`, `Int64` and the other integer types | ``FieldValue/int(_:)`` (a `UInt64` above `Int64.max` fails) |
/// | `Double`, `Float` | ``FieldValue/double(_:)`` |
/// | `String`, an enum with `String` raw values | ``FieldValue/string(_:)`` |
/// | `Date` | ``FieldValue/timestamp(_:)-swift.enum.case``, rounded once to the nearest microsecond (halfway: the later) |
/// | `UUID` | ``FieldValue/uuid(_:)`` |
/// | `URL` | ``FieldValue/string(_:)``: its `absoluteString` |
/// | `Decimal` | ``FieldValue/string(_:)``: its `description`, the exact value in decimal digits (`12.50` as `"12.5"`) |
/// | `Data` | ``FieldValue/bytes(_:)`` |
/// | ``Attachment`` | ``FieldValue/attachment(_:)`` |
/// | `Set<String>` | ``FieldValue/stringSet(_:)`` (merged by union on conflicts) |
/// | arrays and other sequences | ``FieldValue/array(_:)`` |
/// | nested structs, `[String: T]` | ``FieldValue/object(_:)`` |
/// | `nil` | ``FieldValue/null``: the field is present, so an update that clears it reaches the server |
///
/// Arrays and objects may nest ``FieldValue/maximumNestingDepth`` deep.
///
/// ```swift
/// struct Place: Codable { var name: String; var visits: [Date] }
/// let fields = try FieldValueEncoder().encode(Place(name: "Sol", visits: []))
/// // ["name": .string("Sol"), "visits": .array([])]
/// ```
public struct FieldValueEncoder: Sendable {
    /// Makes an encoder.
    public init() {}

    /// The fields of `value`, which must encode as keyed members (a struct or a class).
    ///
    /// - Throws: `EncodingError.invalidValue` with the coding path of what cannot be
    ///   encoded (an unsigned integer too large, nesting too deep, a value that is not
    ///   keyed at the top), or an error the type's own `encode(to:)` throws.
    public func encode<Value: Encodable>(_ value: Value) throws -> [String: FieldValue] {
        let encoded = try encodeValue(value)
        guard case .object(let fields) = encoded else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "a record encodes as named fields, found \(encoded.typeName)"))
        }
        for name in fields.keys.sorted() where fields[name]!.nestingDepth > FieldValue.maximumNestingDepth {
            throw EncodingError.invalidValue(value, .init(codingPath: [FieldCodingKey(stringValue: name)],
                                                          debugDescription: "arrays and objects nest more than \(FieldValue.maximumNestingDepth) deep"))
        }
        return fields
    }

    /// The field value of `value` alone (a scalar, an array, an object).
    ///
    /// - Throws: as ``encode(_:)``.
    public func encodeValue<Value: Encodable>(_ value: Value) throws -> FieldValue {
        try FieldValueEncoding.box(value, at: [])
    }
}

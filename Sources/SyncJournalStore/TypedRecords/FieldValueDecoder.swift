#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncJournalProtocol

/// Decodes `Decodable` values from field values, the reverse of ``FieldValueEncoder``.
///
/// Decoding is forgiving where a value's meaning is clear, so records another version of the
/// app wrote still read:
///
/// - a field that is absent and one that is ``FieldValue/null`` both decode as `nil`;
/// - a `Double` also reads an ``FieldValue/int(_:)`` the double holds exactly;
/// - an integer type also reads a ``FieldValue/double(_:)`` that is a whole number it holds
///   (`4.0` as `4`; `4.5` is an error naming the value);
/// - a ``SyncRecordEnum`` reads a raw value that is none of its cases as its
///   ``SyncRecordEnum/unknownCase``;
/// - a `UUID` also reads its text; a `URL` reads its text, or the keyed form Foundation's
///   own encoding writes;
/// - a `Decimal` reads its decimal text exactly, an int exactly, a double by the decimal of its
///   shortest text (which may differ from the binary value), or Foundation's keyed form;
/// - a `Date` reads a timestamp as the nearest `Date`;
/// - an array also reads a ``FieldValue/stringSet(_:)`` (its elements in byte order).
///
/// An ``Attachment`` reads only an ``FieldValue/attachment(_:)``. Anything else of the wrong
/// type is a `DecodingError` whose coding path names the field (`address.city`, `scores[2]`).
///
/// ```swift
/// struct Place: Codable { var name: String; var rating: Int? }
/// let place = try FieldValueDecoder().decode(Place.self, from: ["name": .string("Sol")])
/// // Place(name: "Sol", rating: nil)
/// ```
public struct FieldValueDecoder: Sendable {
    /// Makes a decoder.
    public init() {}

    /// A `Value` decoded from a field list.
    ///
    /// - Throws: `DecodingError` with the coding path of the field that does not decode,
    ///   or an error the type's own `init(from:)` throws.
    public func decode<Value: Decodable>(_ type: Value.Type, from fields: [String: FieldValue]) throws -> Value {
        try decode(type, fromValue: .object(fields))
    }

    /// A `Value` decoded from one field value.
    ///
    /// - Throws: as ``decode(_:from:)``.
    public func decode<Value: Decodable>(_ type: Value.Type, fromValue value: FieldValue) throws -> Value {
        try FieldValueDecoding.unbox(value, as: type, at: [])
    }
}

/// An enum stored in a ``SyncRecord`` that later versions of the app may add cases to.
///
/// A stored raw value that is none of this version's cases decodes as ``unknownCase``
/// instead of making the whole record undecodable. This holds wherever the enum sits: a
/// property, an optional, an array element, a member of a nested struct. A raw value of
/// another type (a number where the raw values are strings) is still a decoding error.
///
/// Reading a record and saving it with other changes leaves the unknown value as it is stored:
/// an update sends only the fields whose encoding changed, and an enum property read as the
/// unknown case encodes the same before and after the edit. An edit that does change the
/// field (or, for an enum inside an array or a nested struct, anything else in that field)
/// stores the encoding of ``unknownCase`` in place of the unknown value.
///
/// ```swift
/// import SyncJournal
///
/// enum Status: String, SyncRecordEnum {
///     case open, done
///     case unknown
///     static let unknownCase = Status.unknown
/// }
///
/// let status = try FieldValueDecoder().decode(Status.self, fromValue: .string("archived"))
/// print(status)   // unknown: a newer version added "archived"
/// ```
public protocol SyncRecordEnum: RawRepresentable, Codable, Sendable where RawValue: Codable & Sendable {
    /// The case a stored raw value that matches no case decodes as.
    static var unknownCase: Self { get }
}

extension SyncRecordEnum {
    /// Decodes the raw value; one that matches no case is ``unknownCase``.
    ///
    /// - Throws: `DecodingError` when the stored value is not a `RawValue` at all.
    public init(from decoder: any Decoder) throws {
        let rawValue = try decoder.singleValueContainer().decode(RawValue.self)
        self = Self(rawValue: rawValue) ?? Self.unknownCase
    }
}

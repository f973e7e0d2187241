/// A strict JSON value (RFC 8259) that keeps integer literals apart from
/// numbers with a fraction or exponent, so an Int64 survives exactly.
///
/// Objects have no member order of their own: the writer sorts members by
/// the UTF-8 bytes of their names, so the same value always encodes to the
/// same bytes.
///
/// ```swift
/// let value = try JSONValue(parsing: Array(#"{"grade": 7, "score": 7.0}"#.utf8))
/// // .object(["grade": .integer(7), "score": .number(7.0)])
/// let bytes = value.encoded()   // {"grade":7,"score":7.0}
/// ```
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent, within Int64.
    case integer(Int64)
    /// A number written with a fraction or exponent. Always finite when parsed;
    /// the writer writes a non-finite one as `null` (JSON has no such number).
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; member names are unique.
    case object([String: JSONValue])

    /// Parses `bytes` with the default ``JSONParser`` limits.
    ///
    /// - Throws: ``WireError`` with the byte offset of the problem.
    public init(parsing bytes: some Collection<UInt8>) throws(WireError) {
        self = try JSONParser().parse(bytes)
    }

    /// The JSON type's name, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .integer: return "an integer"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// One header field.
///
/// ```swift
/// let header = HTTPHeader(name: "Content-Type", value: "application/json")
/// ```
public struct HTTPHeader: Sendable, Hashable {
    /// The field name as sent.
    public var name: String
    /// The field value without surrounding whitespace.
    public var value: String

    /// Creates a header field.
    ///
    /// ```swift
    /// let header = HTTPHeader(name: "Retry-After", value: "1")
    /// ```
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Whether the field is named `other` (ASCII case-insensitive, as HTTP compares names).
    ///
    /// ```swift
    /// HTTPHeader(name: "Content-Length", value: "0").hasName("content-length")   // true
    /// ```
    public func hasName(_ other: String) -> Bool {
        name.utf8.count == other.utf8.count && zip(name.utf8, other.utf8).allSatisfy { Self.lower($0) == Self.lower($1) }
    }

    private static func lower(_ byte: UInt8) -> UInt8 {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) ? byte + 32 : byte
    }
}

/// A string literal is a ``FieldValue/string(_:)``: `["title": "Milk"]`, or `Field("list") == "inbox"` in a query.
extension FieldValue: ExpressibleByStringLiteral {
    /// The string `value`.
    public init(stringLiteral value: String) { self = .string(value) }
}

/// An integer literal is an ``FieldValue/int(_:)``.
extension FieldValue: ExpressibleByIntegerLiteral {
    /// The integer `value`.
    public init(integerLiteral value: Int64) { self = .int(value) }
}

/// A floating-point literal is a ``FieldValue/double(_:)``.
extension FieldValue: ExpressibleByFloatLiteral {
    /// The double `value`.
    public init(floatLiteral value: Double) { self = .double(value) }
}

/// `true` and `false` are ``FieldValue/bool(_:)``.
extension FieldValue: ExpressibleByBooleanLiteral {
    /// The boolean `value`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

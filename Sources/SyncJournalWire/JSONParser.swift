/// A strict RFC 8259 parser with limits, for bodies from the network.
///
/// Refuses, with a ``WireError`` and the byte offset: anything after the
/// value but whitespace, a byte order mark, comments, trailing commas,
/// leading zeros (`01`), `+1`, `.5`, `1.`, bare control characters in
/// strings, invalid UTF-8 (over-long forms and encoded surrogates
/// included), a `\u` escape of a lone surrogate, an object naming a member
/// twice, an integer literal outside Int64, a number that overflows a
/// double, nesting deeper than ``maximumDepth`` and bodies longer than
/// ``maximumByteCount``. Nesting is bounded before recursion, so no input
/// can exhaust the stack.
///
/// ```swift
/// let parser = JSONParser(maximumDepth: 16, maximumByteCount: 1 << 20)
/// let value = try parser.parse(body)
/// ```
public struct JSONParser: Sendable, Hashable {
    /// The deepest nesting of arrays and objects accepted (the top-level value is depth 1).
    public var maximumDepth: Int
    /// The longest body accepted, in bytes.
    public var maximumByteCount: Int

    /// The default depth: protocol messages nest at most 7 levels.
    public static let defaultMaximumDepth = 32
    /// The default size: 32 MiB.
    public static let defaultMaximumByteCount = 32 << 20

    /// Creates a parser with these limits.
    public init(maximumDepth: Int = JSONParser.defaultMaximumDepth, maximumByteCount: Int = JSONParser.defaultMaximumByteCount) {
        self.maximumDepth = maximumDepth
        self.maximumByteCount = maximumByteCount
    }

    /// Parses one JSON value (of any type) that fills `bytes` but for whitespace.
    ///
    /// - Throws: ``WireError`` with the byte offset of the first problem.
    public func parse(_ bytes: some Collection<UInt8>) throws(WireError) -> JSONValue {
        let count = bytes.count
        if count > maximumByteCount { throw .tooLarge(byteCount: count, limit: maximumByteCount) }
        var scanner = JSONScanner(bytes: Array(bytes), maximumDepth: maximumDepth)
        return try scanner.parseDocument()
    }
}

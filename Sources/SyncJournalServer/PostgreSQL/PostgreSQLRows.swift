/// The rows one statement returned, copied out of libpq's result in binary
/// format (so an `int8` is 8 big-endian bytes and a `bytea` its raw bytes).
///
/// The accessors check every value's shape and throw instead of trapping:
/// what the database returns is input like any other.
///
/// ```swift
/// let rows = try connection.execute("select last from stamp where only = 1")
/// let last = try rows.int64(0, 0)
/// ```
public struct PostgreSQLRows: Sendable {
    /// Each row's column values, `nil` for SQL null.
    public let values: [[[UInt8]?]]
    /// How many rows an `insert`, `update` or `delete` changed (`PQcmdTuples`; 0 when not given).
    public let affected: Int
    /// The statement, whose first words errors name (shortened only when one is made).
    let context: String

    /// Creates rows (the connection does, from a result).
    ///
    /// ```swift
    /// let rows = PostgreSQLRows(values: [[[0, 0, 0, 0, 0, 0, 0, 1]]], affected: 0, context: "select 1::int8")
    /// ```
    public init(values: [[[UInt8]?]], affected: Int, context: String) {
        self.values = values
        self.affected = affected
        self.context = context
    }

    /// The number of rows.
    ///
    /// ```swift
    /// if rows.count == 0 { return nil }
    /// ```
    public var count: Int { values.count }

    private func value(_ row: Int, _ column: Int) throws(PostgreSQLError) -> [UInt8]? {
        guard row >= 0, row < values.count, column >= 0, column < values[row].count else {
            throw failure("no value at row \(row), column \(column)")
        }
        return values[row][column]
    }

    private func failure(_ message: String) -> PostgreSQLError {
        PostgreSQLError(sqlState: nil, message: message, context: PostgreSQLConnection.context(context), connection: "")
    }

    /// Whether the value is SQL null.
    ///
    /// ```swift
    /// let live = try rows.isNull(0, 3)
    /// ```
    public func isNull(_ row: Int, _ column: Int) throws(PostgreSQLError) -> Bool {
        try value(row, column) == nil
    }

    /// An `int8` value, `nil` for null.
    ///
    /// ```swift
    /// let deletedAt = try rows.optionalInt64(0, 3)
    /// ```
    public func optionalInt64(_ row: Int, _ column: Int) throws(PostgreSQLError) -> Int64? {
        guard let bytes = try value(row, column) else { return nil }
        guard bytes.count == 8 else { throw failure("column \(column) is \(bytes.count) bytes, not an 8-byte int8") }
        return bytes.reduce(Int64(0)) { ($0 << 8) | Int64($1) }
    }

    /// An `int8` value that must not be null.
    ///
    /// ```swift
    /// let updatedAt = try rows.int64(0, 2)
    /// ```
    public func int64(_ row: Int, _ column: Int) throws(PostgreSQLError) -> Int64 {
        guard let value = try optionalInt64(row, column) else { throw failure("column \(column) is null") }
        return value
    }

    /// A `text` value (valid UTF-8) that must not be null.
    ///
    /// ```swift
    /// let owner = try rows.text(0, 0)
    /// ```
    public func text(_ row: Int, _ column: Int) throws(PostgreSQLError) -> String {
        guard let bytes = try value(row, column) else { throw failure("column \(column) is null") }
        // Decoding repairs invalid UTF-8, so the bytes survive unchanged exactly
        // when they were valid (`String(validating:as:)` needs macOS 15 / iOS 18).
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.utf8.elementsEqual(bytes) else { throw failure("column \(column) is not UTF-8") }
        return text
    }

    /// A `text` value (valid UTF-8), `nil` for null.
    ///
    /// ```swift
    /// let createdBy = try rows.optionalText(0, 4)
    /// ```
    public func optionalText(_ row: Int, _ column: Int) throws(PostgreSQLError) -> String? {
        guard try value(row, column) != nil else { return nil }
        return try text(row, column)
    }

    /// A `bytea` value that must not be null.
    ///
    /// ```swift
    /// let fields = try rows.bytes(0, 1)
    /// ```
    public func bytes(_ row: Int, _ column: Int) throws(PostgreSQLError) -> [UInt8] {
        guard let bytes = try value(row, column) else { throw failure("column \(column) is null") }
        return bytes
    }
}

/// One statement of a ``PostgreSQLConnection/pipeline(_:)``: its SQL and
/// the values of its `$1`, `$2`, … parameters.
///
/// ```swift
/// let statement = PostgreSQLStatement("select last from user_stamps where owner = $1", [.text("u1")])
/// ```
public struct PostgreSQLStatement: Sendable {
    /// The SQL text, with `$n` placeholders.
    public var sql: String
    /// The values of the placeholders, in order.
    public var parameters: [PostgreSQLValue]

    /// A statement `sql` with `parameters`.
    ///
    /// ```swift
    /// let begin = PostgreSQLStatement("begin isolation level read committed")
    /// ```
    public init(_ sql: String, _ parameters: [PostgreSQLValue] = []) {
        self.sql = sql
        self.parameters = parameters
    }
}

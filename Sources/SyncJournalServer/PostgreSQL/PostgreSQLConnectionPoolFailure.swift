/// Why ``PostgreSQLConnectionPool/withConnection(_:)`` failed: no
/// connection could be made, or the body threw.
///
/// ```swift
/// catch .connect(let error) { print("cannot reach the database: \(error)") }
/// ```
public enum PostgreSQLConnectionPoolFailure<Failure: Error>: Error {
    /// Connecting or configuring a new connection failed.
    case connect(PostgreSQLError)
    /// The body threw.
    case body(Failure)
}

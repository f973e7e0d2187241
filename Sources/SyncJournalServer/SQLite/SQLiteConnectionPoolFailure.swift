/// Why ``SQLiteConnectionPool/withConnection(_:)`` failed: no connection
/// could be opened, or the body threw.
///
/// ```swift
/// catch .open(let error) { print("cannot open: \(error)") }
/// ```
public enum SQLiteConnectionPoolFailure<BodyError: Error>: Error {
    /// Opening or configuring a new connection failed.
    case open(SQLiteError)
    /// The body's own error.
    case body(BodyError)
}

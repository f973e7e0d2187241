/// Why ``SQLiteDatabase/transaction(immediate:_:)`` failed: the transaction
/// itself (`begin`/`commit`) or the body's own error. Either way nothing of
/// the body is kept.
///
/// ```swift
/// catch .database(let error) { print(error.code) } catch .body(let error) { print(error) }
/// ```
public enum SQLiteTransactionFailure<BodyError: Error>: Error {
    /// `begin` or `commit` failed; nothing of the body is kept.
    case database(SQLiteError)
    /// The body threw; everything it did is rolled back.
    case body(BodyError)
}

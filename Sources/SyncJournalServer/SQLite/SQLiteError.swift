import CSQLite

/// A failed SQLite call: the (extended) result code, SQLite's message, what
/// the server was doing, and the database file.
///
/// ```swift
/// do { try database.execute("begin immediate") } catch { print(error) }   // "sqlite begin immediate (./sync-server.sqlite): database is locked (code 5)"
/// ```
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The extended result code (`SQLITE_BUSY` is 5, `SQLITE_CORRUPT` 11, …).
    public var code: Int32
    /// `sqlite3_errmsg`'s text at the time of the failure.
    public var message: String
    /// What was being done: `open`, `prepare select …`, `step insert …`, `begin immediate`.
    public var context: String
    /// The database file.
    public var path: String

    /// Creates an error.
    ///
    /// ```swift
    /// let error = SQLiteError(code: SQLITE_BUSY, message: "database is locked", context: "begin immediate", path: "db.sqlite")
    /// ```
    public init(code: Int32, message: String, context: String, path: String) {
        self.code = code
        self.message = message
        self.context = context
        self.path = path
    }

    /// The primary result code (the low byte of ``code``).
    ///
    /// ```swift
    /// if error.primaryCode == SQLITE_BUSY { /* retry later */ }
    /// ```
    public var primaryCode: Int32 { code & 0xFF }

    /// Whether another connection held a lock for longer than the busy
    /// timeout: worth retrying (the server answers 503).
    ///
    /// ```swift
    /// let status = error.isBusy ? 503 : 500
    /// ```
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }

    /// One line, such as `sqlite step insert into rows … (db.sqlite): disk I/O error (code 10)`.
    public var description: String {
        "sqlite \(context) (\(path)): \(message) (code \(code))"
    }
}

import CSQLite

/// One SQLite connection with its cache of prepared statements.
///
/// A connection is used by one thread at a time (``SQLiteConnectionPool``
/// lends it out whole), so it is opened with `SQLITE_OPEN_NOMUTEX` and its
/// statement cache needs no lock.
///
/// ```swift
/// let database = try SQLiteDatabase(path: "/tmp/x.sqlite", busyTimeoutMilliseconds: 5_000)
/// try database.execute("pragma journal_mode=WAL")
/// ```
public final class SQLiteDatabase: @unchecked Sendable {
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    /// The database file.
    public let path: String

    /// Opens (creating if needed) the database at `path`.
    ///
    /// ```swift
    /// let database = try SQLiteDatabase(path: "./sync-server.sqlite")
    /// ```
    ///
    /// - Throws: ``SQLiteError`` when the file cannot be opened.
    public init(path: String, busyTimeoutMilliseconds: Int32 = 5_000) throws(SQLiteError) {
        self.path = path
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            self.handle = nil
            throw SQLiteError(code: code, message: message, context: "open", path: path)
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
    }

    deinit { close() }

    /// Finalizes the cached statements and closes the connection (again: nothing).
    ///
    /// ```swift
    /// database.close()
    /// ```
    public func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements = [:]
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// The rows the last finished `insert`, `update` or `delete` changed.
    var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }

    func error(code: Int32, context: String) -> SQLiteError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "connection closed"
        return SQLiteError(code: code, message: message, context: context, path: path)
    }

    /// Runs one or more statements that return no rows (pragmas, DDL, `begin`).
    ///
    /// ```swift
    /// try database.execute("begin immediate")
    /// ```
    public func execute(_ sql: String) throws(SQLiteError) {
        guard let handle else { throw error(code: SQLITE_MISUSE, context: "exec \(sql.prefix(60))") }
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw SQLiteError(code: code, message: text, context: "exec \(sql.prefix(60))", path: path)
        }
    }

    /// Runs `body` with the cached prepared statement for `sql` (prepared on
    /// first use), then resets it and clears its bindings.
    ///
    /// ```swift
    /// try database.withStatement("delete from rows where kind = ?") { statement in
    ///     statement.bind(1, "pin")
    ///     _ = try statement.step()
    /// }
    /// ```
    public func withStatement<T>(_ sql: String, _ body: (SQLiteStatement) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        let prepared = try statement(for: sql)
        defer {
            sqlite3_reset(prepared)
            sqlite3_clear_bindings(prepared)
        }
        return try body(SQLiteStatement(handle: prepared, database: self, sql: sql))
    }

    private func statement(for sql: String) throws(SQLiteError) -> OpaquePointer {
        if let cached = statements[sql] { return cached }
        guard let handle else { throw error(code: SQLITE_MISUSE, context: "prepare \(sql.prefix(60))") }
        var prepared: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        guard code == SQLITE_OK, let prepared else {
            sqlite3_finalize(prepared)
            throw error(code: code, context: "prepare \(sql.prefix(60))")
        }
        statements[sql] = prepared
        return prepared
    }

    /// Runs `body` inside one transaction: committed when it returns, rolled
    /// back when it throws (or the commit fails). `immediate` takes the write
    /// lock up front, so two writers never deadlock upgrading read locks.
    ///
    /// ```swift
    /// try database.transaction(immediate: true) { () throws(SQLiteError) in try database.execute("delete from horizons") }
    /// ```
    public func transaction<T, E: Error>(immediate: Bool, _ body: () throws(E) -> T) throws(SQLiteTransactionFailure<E>) -> T {
        do {
            try execute(immediate ? "begin immediate" : "begin")
        } catch {
            throw .database(error)
        }
        let result: T
        do {
            result = try body()
        } catch {
            rollback()
            throw .body(error)
        }
        do {
            try execute("commit")
        } catch {
            rollback()
            throw .database(error)
        }
        return result
    }

    /// Rolls back an open transaction; quiet when none is open (SQLite may
    /// have rolled back on its own after an I/O error).
    private func rollback() {
        guard let handle, sqlite3_get_autocommit(handle) == 0 else { return }
        try? execute("rollback")
    }
}

import CSQLite

/// One prepared statement of a ``SQLiteDatabase``, between its bindings and
/// its reset. Only the database hands these out (see
/// ``SQLiteDatabase/withStatement(_:_:)``), and only for the closure's duration.
///
/// ```swift
/// let count = try database.withStatement("select count(*) from rows where kind = ?") { statement in
///     statement.bind(1, "pin")
///     return try statement.step() ? statement.int64(0) : 0
/// }
/// ```
public struct SQLiteStatement {
    let handle: OpaquePointer
    let database: SQLiteDatabase
    let sql: String

    /// Binds text to parameter `index` (from 1).
    ///
    /// ```swift
    /// statement.bind(1, "pin")
    /// ```
    public func bind(_ index: Int32, _ value: String) {
        var text = value
        text.withUTF8 { buffer in
            // An empty buffer may have no base address, which would bind NULL, not "".
            if let base = buffer.baseAddress, buffer.count > 0 {
                _ = base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { characters in
                    sqlite3_bind_text(handle, index, characters, Int32(buffer.count), sqliteTransient)
                }
            } else {
                _ = sqlite3_bind_text(handle, index, "", 0, sqliteTransient)
            }
        }
    }

    /// Binds text, or NULL for `nil`.
    ///
    /// ```swift
    /// statement.bind(7, createdBy)
    /// ```
    public func bind(_ index: Int32, _ value: String?) {
        if let value { bind(index, value) } else { sqlite3_bind_null(handle, index) }
    }

    /// Binds a 64-bit integer to parameter `index`.
    ///
    /// ```swift
    /// statement.bind(2, Int64(1_764_000_000_000))
    /// ```
    public func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    /// Binds an integer, or NULL for `nil`.
    ///
    /// ```swift
    /// statement.bind(3, row.deletedAt)
    /// ```
    public func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }

    /// Binds bytes as a blob (an empty one is a zero-length blob, not NULL).
    ///
    /// ```swift
    /// statement.bind(4, bytes: encodedFields)
    /// ```
    public func bind(_ index: Int32, bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            if let base = buffer.baseAddress, buffer.count > 0 {
                _ = sqlite3_bind_blob(handle, index, base, Int32(buffer.count), sqliteTransient)
            } else {
                _ = sqlite3_bind_zeroblob(handle, index, 0)
            }
        }
    }

    /// Runs the statement to its next row: `true` when a row is ready to read, `false` when done.
    ///
    /// ```swift
    /// while try statement.step() { rows.append(statement.text(0)) }
    /// ```
    ///
    /// - Throws: ``SQLiteError`` with the step's result code.
    public func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw database.error(code: code, context: "step \(sql.prefix(60))")
        }
    }

    /// Whether column `index` (from 0) of the current row is NULL.
    ///
    /// ```swift
    /// let deleted = statement.isNull(4) ? nil : statement.int64(4)
    /// ```
    public func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    /// Column `index` as an integer.
    ///
    /// ```swift
    /// let stamp = statement.int64(3)
    /// ```
    public func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// Column `index` as an integer, `nil` when NULL.
    ///
    /// ```swift
    /// let deletedAt = statement.optionalInt64(4)
    /// ```
    public func optionalInt64(_ index: Int32) -> Int64? { isNull(index) ? nil : int64(index) }

    /// Column `index` as text (invalid UTF-8 is repaired, never trusted).
    ///
    /// ```swift
    /// let id = statement.text(1)
    /// ```
    public func text(_ index: Int32) -> String {
        guard let characters = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: characters, count: count), as: UTF8.self)
    }

    /// Column `index` as text, `nil` when NULL.
    ///
    /// ```swift
    /// let createdBy = statement.optionalText(6)
    /// ```
    public func optionalText(_ index: Int32) -> String? { isNull(index) ? nil : text(index) }

    /// Column `index` as bytes.
    ///
    /// ```swift
    /// let fields = statement.bytes(2)
    /// ```
    public func bytes(_ index: Int32) -> [UInt8] {
        guard let base = sqlite3_column_blob(handle, index) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, index))
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }
}

/// SQLite's `SQLITE_TRANSIENT`: SQLite copies the bound bytes before the call returns.
let sqliteTransient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

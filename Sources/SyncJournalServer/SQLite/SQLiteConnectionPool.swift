import SyncJournalPlatform

/// Connections to one database file, lent to one thread at a time.
///
/// Why a pool and not one serialised connection: in WAL mode readers never
/// block the writer or each other, so pulls and reads from many HTTP
/// connections run in parallel, while pushes still serialise on SQLite's
/// write lock (`begin immediate`, waiting up to the busy timeout). A
/// connection keeps its prepared statements, so a thread that borrows a warm
/// connection skips preparing. Idle connections are kept up to
/// `maximumIdle`; beyond that a returned connection is closed.
///
/// ```swift
/// let pool = SQLiteConnectionPool(path: "db.sqlite") { database throws(SQLiteError) in
///     try database.execute("pragma synchronous=FULL")
/// }
/// let count = try pool.withConnection { database throws(SQLiteError) in try countRows(database) }
/// ```
public final class SQLiteConnectionPool: Sendable {
    /// The database file.
    public let path: String
    private let busyTimeoutMilliseconds: Int32
    private let maximumIdle: Int
    private let configure: @Sendable (SQLiteDatabase) throws(SQLiteError) -> Void
    private let idle = Mutex<[SQLiteDatabase]>([])

    /// A pool for `path`; `configure` runs once on every new connection (pragmas).
    ///
    /// ```swift
    /// let pool = SQLiteConnectionPool(path: "db.sqlite", maximumIdle: 4) { _ in }
    /// ```
    public init(path: String, busyTimeoutMilliseconds: Int32 = 5_000, maximumIdle: Int = 8,
                configure: @escaping @Sendable (SQLiteDatabase) throws(SQLiteError) -> Void) {
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.maximumIdle = max(1, maximumIdle)
        self.configure = configure
    }

    /// Runs `body` with a connection no other thread uses meanwhile.
    ///
    /// ```swift
    /// try pool.withConnection { database throws(SQLiteError) in try database.execute("select 1") }
    /// ```
    public func withConnection<T, E: Error>(_ body: (SQLiteDatabase) throws(E) -> T) throws(SQLiteConnectionPoolFailure<E>) -> T {
        let database: SQLiteDatabase
        if let reused = idle.withLock({ $0.popLast() }) {
            database = reused
        } else {
            do {
                database = try SQLiteDatabase(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
                try configure(database)
            } catch {
                throw .open(error)
            }
        }
        let result: T
        do {
            result = try body(database)
        } catch {
            giveBack(database)
            throw .body(error)
        }
        giveBack(database)
        return result
    }

    private func giveBack(_ database: SQLiteDatabase) {
        let kept = idle.withLock { connections -> Bool in
            guard connections.count < maximumIdle else { return false }
            connections.append(database)
            return true
        }
        if !kept { database.close() }
    }

    /// Closes every idle connection (borrowed ones close when they come back and find no room).
    ///
    /// ```swift
    /// pool.closeIdle()
    /// ```
    public func closeIdle() {
        let connections = idle.withLock { connections -> [SQLiteDatabase] in
            defer { connections = [] }
            return connections
        }
        for connection in connections { connection.close() }
    }
}

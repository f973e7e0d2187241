import SyncJournalPlatform

/// Connections to one PostgreSQL database, lent to one thread at a time.
///
/// The HTTP server runs each client connection on its own thread; a thread
/// borrows a connection for one storage call. Idle connections are kept up
/// to `maximumIdle`. A connection that comes back broken (the server
/// restarted, the network dropped it) is closed instead of kept, so the next
/// borrower connects afresh: that is the whole of "reconnect".
///
/// ```swift
/// let pool = PostgreSQLConnectionPool(connection: "host=127.0.0.1 dbname=sync") { connection throws(PostgreSQLError) in
///     try connection.execute("set lock_timeout = '5s'")
/// }
/// let rows = try pool.withConnection { connection throws(PostgreSQLError) in try connection.execute("select 1::int8") }
/// ```
public final class PostgreSQLConnectionPool: Sendable {
    /// The connection string (may hold a password; never logged: see ``redactedConnection``).
    private let connection: String
    /// The connection string without its password.
    public let redactedConnection: String
    private let maximumIdle: Int
    private let preparesStatements: Bool
    private let configure: @Sendable (PostgreSQLConnection) throws(PostgreSQLError) -> Void
    private let idle = Mutex<[PostgreSQLConnection]>([])

    /// A pool for `connection`; `configure` runs once on every new connection (session settings).
    ///
    /// ```swift
    /// let pool = PostgreSQLConnectionPool(connection: conninfo, maximumIdle: 4) { _ in }
    /// ```
    ///
    /// - Parameter preparesStatements: whether its connections prepare
    ///   statements they run again (``PostgreSQLConnection/preparesStatements``).
    public init(connection: String, maximumIdle: Int = 8, preparesStatements: Bool = true,
                configure: @escaping @Sendable (PostgreSQLConnection) throws(PostgreSQLError) -> Void) {
        self.connection = connection
        self.redactedConnection = PostgreSQLConnection.redact(connection)
        self.maximumIdle = max(1, maximumIdle)
        self.preparesStatements = preparesStatements
        self.configure = configure
    }

    /// Runs `body` with a connection no other thread uses meanwhile.
    ///
    /// ```swift
    /// try pool.withConnection { connection throws(PostgreSQLError) in try connection.execute("select 1") }
    /// ```
    ///
    /// - Throws: ``PostgreSQLConnectionPoolFailure/connect(_:)`` when no
    ///   connection can be made, ``PostgreSQLConnectionPoolFailure/body(_:)`` with `body`'s error.
    public func withConnection<T, E: Error>(_ body: (PostgreSQLConnection) throws(E) -> T) throws(PostgreSQLConnectionPoolFailure<E>) -> T {
        let borrowed: PostgreSQLConnection
        if let reused = idle.withLock({ $0.popLast() }) {
            borrowed = reused
        } else {
            do throws(PostgreSQLError) {
                borrowed = try PostgreSQLConnection(connection: connection, preparesStatements: preparesStatements)
                try configure(borrowed)
            } catch {
                throw .connect(error)
            }
        }
        let result: T
        do {
            result = try body(borrowed)
        } catch {
            giveBack(borrowed)
            throw .body(error)
        }
        giveBack(borrowed)
        return result
    }

    /// ``withConnection(_:)`` for a body that fails as the database does:
    /// a connection that cannot be made and the body's own failure are both
    /// the ``PostgreSQLError``.
    ///
    /// ```swift
    /// let one = try pool.withDatabaseConnection { connection throws(PostgreSQLError) in try connection.execute("select 1::int8").int64(0, 0) }
    /// ```
    package func withDatabaseConnection<T>(_ body: (PostgreSQLConnection) throws(PostgreSQLError) -> T) throws(PostgreSQLError) -> T {
        do throws(PostgreSQLConnectionPoolFailure<PostgreSQLError>) {
            return try withConnection(body)
        } catch {
            switch error {
            case .connect(let failure), .body(let failure): throw failure
            }
        }
    }

    private func giveBack(_ connection: PostgreSQLConnection) {
        guard !connection.isBroken else {
            connection.close()
            return
        }
        let kept = idle.withLock { connections -> Bool in
            guard connections.count < maximumIdle else { return false }
            connections.append(connection)
            return true
        }
        if !kept { connection.close() }
    }

    /// Closes every idle connection (borrowed ones close when they come back and find no room).
    ///
    /// ```swift
    /// pool.closeIdle()
    /// ```
    public func closeIdle() {
        let connections = idle.withLock { connections -> [PostgreSQLConnection] in
            defer { connections.removeAll() }
            return connections
        }
        for connection in connections { connection.close() }
    }
}

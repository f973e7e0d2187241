/// A failed libpq call: the SQLSTATE (when the server sent one), the
/// message, what the storage was doing, and the connection string without
/// its password.
///
/// ```swift
/// do { try connection.execute("select 1") } catch { print(error) }
/// // "postgres select 1 (host=127.0.0.1 port=5432 dbname=sync): [57P01] terminating connection due to administrator command"
/// ```
public struct PostgreSQLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The five-character SQLSTATE (`40001` serialization failure, `23505`
    /// unique violation, class `08` connection exceptions, …), or `nil`
    /// when libpq failed on the client side (a lost connection, a refused connect).
    public var sqlState: String?
    /// The server's or libpq's message, one line.
    public var message: String
    /// What was being done: `connect`, `begin`, the statement's first words.
    public var context: String
    /// The connection string with any password removed.
    public var connection: String
    /// Whether the connection was found broken after the failure
    /// (`PQstatus` is `CONNECTION_BAD`): the pool drops it and a retry opens a new one.
    public var connectionLost: Bool

    /// Creates an error.
    ///
    /// ```swift
    /// let error = PostgreSQLError(sqlState: "40001", message: "could not serialize access", context: "commit", connection: "dbname=sync")
    /// ```
    public init(sqlState: String?, message: String, context: String, connection: String, connectionLost: Bool = false) {
        self.sqlState = sqlState
        self.message = message
        self.context = context
        self.connection = connection
        self.connectionLost = connectionLost
    }

    /// Whether the connection to the server is gone or could not be made:
    /// libpq says so, or the SQLSTATE is a connection exception (class `08`)
    /// or an operator intervention (`57P01` admin shutdown, `57P02` crash
    /// shutdown, `57P03` cannot connect now).
    ///
    /// ```swift
    /// if error.isConnectionFailure { /* drop the connection, retry on a new one */ }
    /// ```
    public var isConnectionFailure: Bool {
        if connectionLost { return true }
        guard let sqlState else { return false }
        return sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    /// Whether running the whole transaction again may succeed: a
    /// serialization failure (`40001`), a deadlock (`40P01`), a unique
    /// violation from a racing writer (`23505`: the retry sees the winner's
    /// row), a prepared statement the session no longer has (`26000`: the
    /// connection then forgets its statements, and the retry prepares them
    /// again), or a lost connection.
    ///
    /// ```swift
    /// if error.isRetryable && attempt < 3 { continue }
    /// ```
    public var isRetryable: Bool {
        isConnectionFailure || ["40001", "40P01", "23505", "26000"].contains(sqlState ?? "")
    }

    /// Whether a lock was not granted within `lock_timeout` (`55P03`):
    /// another transaction holds a user's stamp lock too long; worth a later retry (503).
    ///
    /// ```swift
    /// let status = error.isLockTimeout ? 503 : 500
    /// ```
    public var isLockTimeout: Bool { sqlState == "55P03" }

    /// One line, such as `postgres insert into rows … (host=db dbname=sync): [23505] duplicate key value …`.
    public var description: String {
        "postgres \(context) (\(connection)): [\(sqlState ?? "no sqlstate")] \(message)"
    }
}

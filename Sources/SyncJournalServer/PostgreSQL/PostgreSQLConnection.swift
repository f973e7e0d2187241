import Foundation
import CLibPQ

/// One libpq connection (`PGconn`), used by one thread at a time.
///
/// Every statement is sent with binary, typed parameters and binary
/// results: user data is never spliced into SQL. A statement seen a second
/// time is prepared on the session and from then on run by name, so the
/// server skips parsing it; it is still planned for each run's values
/// (``preparesStatements``).
/// Not thread-safe on its own; ``PostgreSQLConnectionPool`` lends it to one
/// thread at a time, which is why it may cross threads (`@unchecked Sendable`).
///
/// ```swift
/// let connection = try PostgreSQLConnection(connection: "host=127.0.0.1 port=5432 dbname=sync")
/// let rows = try connection.execute("select owner from rows where kind = $1 and id = $2", [.text("pin"), .text("p1")])
/// ```
public final class PostgreSQLConnection: @unchecked Sendable {
    private(set) var handle: OpaquePointer?
    /// The connection string without its password (for errors and logs).
    public let redactedConnection: String
    /// Whether statements run again are prepared on the server session:
    /// as asked, on PostgreSQL 12 or later (where each run can still be
    /// planned for its values). Turn it off behind a pooler that hands a
    /// connection's statements to different server sessions (PgBouncer in
    /// transaction mode before 1.21).
    public let preparesStatements: Bool
    private var statementCache = PreparedStatementCache()
    /// Set when a statement failed because the server ended the session
    /// (`57P01` and the like): libpq may still report the connection as
    /// good until it reads the close, and a pool must not lend it again.
    private var sessionEnded = false

    /// Connects (blocking) with `connection`, a libpq connection string
    /// (`host=… port=… dbname=…` or a `postgresql://` URI).
    ///
    /// ```swift
    /// let connection = try PostgreSQLConnection(connection: "postgresql://sync@db.internal/sync")
    /// ```
    ///
    /// - Parameters:
    ///   - applicationName: shown in `pg_stat_activity` (the connection string may override it).
    ///   - connectTimeoutSeconds: how long a connect may take (the connection string may override it).
    ///   - preparesStatements: whether statements run again are prepared on the session.
    /// - Throws: ``PostgreSQLError`` with `connectionLost` set when the server cannot be reached.
    public init(connection: String, applicationName: String = "sync-server", connectTimeoutSeconds: Int = 10,
                preparesStatements: Bool = true) throws(PostgreSQLError) {
        redactedConnection = Self.redact(connection)
        // Defaults first, then dbname (expanded from the string): later keywords win, so the string may override.
        let keywords = ["application_name", "connect_timeout", "dbname"]
        let values = [applicationName, String(connectTimeoutSeconds), connection]
        let connected: OpaquePointer? = Self.withCStrings(keywords) { keywordPointers in
            Self.withCStrings(values) { valuePointers in PQconnectdbParams(keywordPointers, valuePointers, 1) }
        }
        guard let connected else {
            throw PostgreSQLError(sqlState: nil, message: "out of memory", context: "connect", connection: redactedConnection, connectionLost: true)
        }
        guard PQstatus(connected) == CONNECTION_OK else {
            let message = Self.oneLine(PQerrorMessage(connected))
            PQfinish(connected)
            throw PostgreSQLError(sqlState: nil, message: message, context: "connect", connection: redactedConnection, connectionLost: true)
        }
        // Notices ("relation already exists, skipping") would go to standard error; they are not failures.
        PQsetNoticeProcessor(connected, { _, _ in }, nil)
        self.preparesStatements = preparesStatements && PQserverVersion(connected) >= 120_000
        handle = connected
        if self.preparesStatements {
            // Preparing saves parsing; each run is still planned with its own
            // values and the tables' current size. A generic plan is kept
            // once chosen, and one chosen while `operations` was nearly empty
            // read every operation of the user to find a push's few (about
            // 470 index entries a lookup after ten seconds of load).
            do throws(PostgreSQLError) { try execute("set plan_cache_mode = force_custom_plan") } catch {
                close()
                throw error
            }
        }
    }

    deinit { close() }

    /// Closes the connection; later statements fail as a lost connection.
    ///
    /// ```swift
    /// connection.close()
    /// ```
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        statementCache.forgetAll()
    }

    /// Whether the connection is closed, libpq found it broken, or a statement
    /// failed because the server ended the session.
    ///
    /// ```swift
    /// if connection.isBroken { pool.discard(connection) }
    /// ```
    public var isBroken: Bool {
        guard let handle, !sessionEnded else { return true }
        return PQstatus(handle) != CONNECTION_OK
    }

    /// The server process serving this connection (for `pg_terminate_backend` in tests).
    ///
    /// ```swift
    /// let pid = connection.serverProcessID
    /// ```
    public var serverProcessID: Int32 {
        guard let handle else { return 0 }
        return PQbackendPID(handle)
    }

    /// Runs one statement with `parameters` as `$1`, `$2`, … and returns its rows.
    ///
    /// ```swift
    /// let rows = try connection.execute("update stamp set last = $1 where only = 1", [.int64(stamp)])
    /// ```
    ///
    /// - Throws: ``PostgreSQLError`` with the SQLSTATE, the server's message and the statement.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [PostgreSQLValue] = []) throws(PostgreSQLError) -> PostgreSQLRows {
        // The statement names itself in errors; its first words are taken only when one is made.
        let context = sql
        let handle = try openHandle(context: context)
        let types = parameters.map(\.typeOID)
        let plan = plan(sql, types)
        if case .prepare(let name) = plan {
            // One extra round trip, once per statement and connection.
            let prepared = PQprepare(handle, name, sql, Int32(parameters.count), types)
            guard let prepared else {
                statementCache.abandon(name)
                throw failure(handle, context: context)
            }
            defer { PQclear(prepared) }
            do throws(PostgreSQLError) { _ = try rows(of: prepared, handle: handle, context: context) } catch {
                statementCache.abandon(name)
                throw error
            }
        }
        let result = Self.withParameters(parameters) { pointers, lengths, formats in
            switch plan {
            case .unnamed:
                PQexecParams(handle, sql, Int32(parameters.count), types, pointers, lengths, formats, 1)
            case .prepare(let name), .prepared(let name):
                PQexecPrepared(handle, name, Int32(parameters.count), pointers, lengths, formats, 1)
            }
        }
        guard let result else { throw noticed(failure(handle, context: context)) }
        defer { PQclear(result) }
        do throws(PostgreSQLError) { return try rows(of: result, handle: handle, context: context) } catch { throw noticed(error) }
    }

    /// Sends `statements` in one round trip (libpq's pipeline mode) and
    /// returns each one's rows or error, in order.
    ///
    /// The server runs them one after another as if each were sent alone;
    /// after a failed statement it skips the rest until the end of the
    /// pipeline, and those come back as failures too. With an explicit
    /// `begin`, a failure leaves the transaction aborted: roll it back.
    /// The whole pipeline is sent before any result is read, so keep it
    /// small (parameters up to ``pipelineParameterBudget`` bytes) and no
    /// result large: on a blocking connection, a pipeline that fills both
    /// directions' socket buffers would wait on itself.
    ///
    /// ```swift
    /// let results = try connection.pipeline([PostgreSQLStatement("begin"), PostgreSQLStatement("select 1::int8")])
    /// ```
    ///
    /// - Throws: ``PostgreSQLError`` when the pipeline cannot be sent or
    ///   its results read (the connection is then lost); a statement's own
    ///   failure is its element of the result instead.
    public func pipeline(_ statements: [PostgreSQLStatement]) throws(PostgreSQLError) -> [Result<PostgreSQLRows, PostgreSQLError>] {
        func context() -> String { statements.map { Self.context($0.sql) }.joined(separator: "; ") }
        let handle = try openHandle(context: context())
        guard PQenterPipelineMode(handle) == 1 else { throw failure(handle, context: "pipeline: \(context())") }
        var sent = 0
        var sendFailure: PostgreSQLError?
        var plans: [PreparedStatementCache.Plan] = []
        plans.reserveCapacity(statements.count)
        for statement in statements {
            let types = statement.parameters.map(\.typeOID)
            let plan = plan(statement.sql, types)
            if case .prepare(let name) = plan,
               PQsendPrepare(handle, name, statement.sql, Int32(statement.parameters.count), types) != 1 {
                statementCache.abandon(name)
                sendFailure = failure(handle, context: statement.sql)
                break
            }
            let queued = Self.withParameters(statement.parameters) { pointers, lengths, formats in
                switch plan {
                case .unnamed:
                    PQsendQueryParams(handle, statement.sql, Int32(statement.parameters.count), types, pointers, lengths, formats, 1)
                case .prepare(let name), .prepared(let name):
                    PQsendQueryPrepared(handle, name, Int32(statement.parameters.count), pointers, lengths, formats, 1)
                }
            }
            guard queued == 1 else {
                // A prepare queued just before is read and dropped with the pipeline's end; whether it took is unknown.
                if case .prepare(let name) = plan { statementCache.abandon(name) }
                sendFailure = failure(handle, context: statement.sql)
                break
            }
            plans.append(plan)
            sent += 1
        }
        if PQpipelineSync(handle) != 1, sendFailure == nil { sendFailure = failure(handle, context: "pipeline sync: \(context())") }
        var results: [Result<PostgreSQLRows, PostgreSQLError>] = []
        results.reserveCapacity(statements.count)
        for (statement, plan) in zip(statements.prefix(sent), plans) {
            let statementContext = statement.sql
            var outcome: Result<PostgreSQLRows, PostgreSQLError>?
            if case .prepare(let name) = plan {
                // The prepare's own result comes first; if it failed, its error is the statement's.
                while let result = PQgetResult(handle) {
                    defer { PQclear(result) }
                    if outcome != nil { continue }
                    do throws(PostgreSQLError) { _ = try rows(of: result, handle: handle, context: statementContext) } catch {
                        statementCache.abandon(name)
                        outcome = .failure(error)
                    }
                }
            }
            let prepareFailed = outcome != nil
            // Each statement's results end with a null result.
            while let result = PQgetResult(handle) {
                defer { PQclear(result) }
                if outcome != nil { continue }
                if PQresultStatus(result) == PGRES_PIPELINE_ABORTED {
                    outcome = .failure(PostgreSQLError(sqlState: nil, message: "skipped after an earlier statement of its pipeline failed",
                                                       context: Self.context(statementContext), connection: redactedConnection,
                                                       connectionLost: PQstatus(handle) != CONNECTION_OK))
                } else {
                    do throws(PostgreSQLError) { outcome = .success(try rows(of: result, handle: handle, context: statementContext)) } catch {
                        outcome = .failure(error)
                    }
                }
            }
            if !prepareFailed, case .failure(let error)? = outcome { _ = noticed(error) }
            results.append(outcome ?? .failure(failure(handle, context: statementContext)))
        }
        // The pipeline's end: one sync result, then libpq leaves pipeline mode.
        var synced = false
        while let result = PQgetResult(handle) {
            defer { PQclear(result) }
            if PQresultStatus(result) == PGRES_PIPELINE_SYNC { synced = true; break }
        }
        guard synced, PQexitPipelineMode(handle) == 1 else {
            // Results and connection state no longer line up: never reuse it.
            let lost = failure(handle, context: "pipeline end: \(context())")
            close()
            throw PostgreSQLError(sqlState: lost.sqlState, message: lost.message, context: lost.context,
                                  connection: redactedConnection, connectionLost: true)
        }
        if let sendFailure { throw sendFailure }
        return results
    }

    /// How many bytes of parameters a ``pipeline(_:)`` should carry at most:
    /// well under the socket buffers of a loopback or LAN connection, so
    /// the server can take the whole pipeline while its first answers wait.
    public static let pipelineParameterBudget = 32 * 1024

    /// How to send `sql` with parameters of `types`: unnamed, or by a name
    /// prepared on this connection (``PreparedStatementCache``).
    private func plan(_ sql: String, _ types: [UInt32]) -> PreparedStatementCache.Plan {
        guard preparesStatements else { return .unnamed }
        return statementCache.plan(sql: sql, types: types)
    }

    /// Returns `error`, first forgetting the prepared statements when it
    /// says the session no longer has them as prepared: `26000` (no such
    /// statement: a `DEALLOCATE`, or a pooler that moved this connection to
    /// another server session) or `0A000` (a cached plan whose result
    /// columns changed under it, after an `alter table`).
    private func noticed(_ error: PostgreSQLError) -> PostgreSQLError {
        if error.sqlState == "26000" || error.sqlState == "0A000" || error.connectionLost { statementCache.forgetAll() }
        if error.isConnectionFailure { sessionEnded = true }
        return error
    }

    private func openHandle(context: @autoclosure () -> String) throws(PostgreSQLError) -> OpaquePointer {
        guard let handle else {
            throw PostgreSQLError(sqlState: nil, message: "the connection is closed", context: Self.context(context()),
                                  connection: redactedConnection, connectionLost: true)
        }
        return handle
    }

    private func failure(_ handle: OpaquePointer, context: String) -> PostgreSQLError {
        PostgreSQLError(sqlState: nil, message: Self.oneLine(PQerrorMessage(handle)), context: Self.context(context),
                        connection: redactedConnection, connectionLost: PQstatus(handle) != CONNECTION_OK)
    }

    /// Copies one result's rows out of libpq, or its error.
    private func rows(of result: OpaquePointer, handle: OpaquePointer, context: String) throws(PostgreSQLError) -> PostgreSQLRows {
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let sqlState = PQresultErrorField(result, CLibPQDiagnosticSQLState).map { String(cString: $0) }
            let primary = PQresultErrorField(result, CLibPQDiagnosticMessagePrimary).map { String(cString: $0) }
            throw PostgreSQLError(sqlState: sqlState, message: primary ?? Self.oneLine(PQerrorMessage(handle)), context: Self.context(context),
                                  connection: redactedConnection, connectionLost: PQstatus(handle) != CONNECTION_OK)
        }
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        var values: [[[UInt8]?]] = []
        values.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            var columns: [[UInt8]?] = []
            columns.reserveCapacity(columnCount)
            for column in 0..<columnCount {
                if PQgetisnull(result, Int32(row), Int32(column)) != 0 {
                    columns.append(nil)
                    continue
                }
                let length = Int(PQgetlength(result, Int32(row), Int32(column)))
                guard length > 0, let start = PQgetvalue(result, Int32(row), Int32(column)) else {
                    columns.append([])
                    continue
                }
                columns.append(start.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) })
            }
            values.append(columns)
        }
        let affected = PQcmdTuples(result).map { Int(String(cString: $0)) ?? 0 } ?? 0
        return PostgreSQLRows(values: values, affected: affected, context: context)
    }

    /// Calls `body` with libpq's value arrays for `parameters`: binary
    /// format, null parameters as nil pointers (their types are the
    /// caller's, from ``PostgreSQLValue/typeOID``). The copies live until
    /// `body` returns (libpq copies them before `PQexecParams` or
    /// `PQsendQueryParams` returns).
    private static func withParameters<T>(_ parameters: [PostgreSQLValue],
                                          _ body: ([UnsafePointer<CChar>?], [Int32], [Int32]) -> T) -> T {
        let encoded = parameters.map(\.binary)
        let lengths = encoded.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        let buffers: [UnsafeMutablePointer<CChar>?] = encoded.map { bytes in
            guard let bytes else { return nil }
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, bytes.count))
            bytes.withUnsafeBytes { source in
                UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress ?? UnsafeRawPointer(buffer), byteCount: source.count)
            }
            return buffer
        }
        defer { for buffer in buffers { buffer?.deallocate() } }
        return body(buffers.map { $0.map { UnsafePointer($0) } }, lengths, formats)
    }

    // MARK: Text

    /// The connection string's settings without `password`, as `key=value`
    /// pairs; a string libpq cannot parse is not echoed at all.
    ///
    /// ```swift
    /// PostgreSQLConnection.redact("host=db password=secret dbname=sync")   // "host=db dbname=sync"
    /// ```
    public static func redact(_ connection: String) -> String {
        var failure: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connection, &failure) else {
            if let failure { PQfreemem(failure) }
            return "(a connection string libpq cannot parse)"
        }
        defer { PQconninfoFree(options) }
        var pairs: [String] = []
        var option = options
        while let keyword = option.pointee.keyword {
            let name = String(cString: keyword)
            if let value = option.pointee.val, name != "password" {
                let text = String(cString: value)
                pairs.append(text.contains(where: { $0 == " " || $0 == "'" }) || text.isEmpty
                             ? "\(name)='\(text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'"))'"
                             : "\(name)=\(text)")
            }
            option += 1
        }
        return pairs.joined(separator: " ")
    }

    /// A statement's first words, whitespace collapsed, for error context.
    static func context(_ sql: String) -> String {
        let words = sql.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
        let text = words.prefix(8).joined(separator: " ")
        return words.count > 8 ? text + " …" : text
    }

    static func oneLine(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "unknown libpq failure" }
        let lines = String(cString: text).split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        let joined = lines.filter { !$0.isEmpty }.joined(separator: " ")
        return joined.isEmpty ? "unknown libpq failure" : joined
    }

    private static func withCStrings<T>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
        let copies = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        return body(copies.map { $0.map { UnsafePointer($0) } } + [nil])
    }
}

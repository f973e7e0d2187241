import Foundation
import SyncJournalServer
import Testing

/// Statements a connection runs again are prepared on its server session,
/// and a session that loses them is recovered from, never trusted blindly.
@Suite("PostgreSQL prepared statements", .enabled(if: PostgreSQLTestDatabase.shouldRun, PostgreSQLTestDatabase.skipReason))
struct PostgreSQLPreparedStatementTests {
    /// A statement text no other test sends, so the session's view counts only this test's.
    private static func uniqueSQL(_ body: String) -> String {
        "\(body) /* \(UUID().uuidString) */"
    }

    /// How many statements with exactly `sql` the connection's session has prepared.
    private static func preparedCount(_ connection: PostgreSQLConnection, _ sql: String) throws -> Int64 {
        try connection.execute("select count(*)::int8 from pg_prepared_statements where statement = $1 /* count */", [.text(sql)]).int64(0, 0)
    }

    @Test("a statement is sent unnamed the first time and prepared the second, and every run answers the same")
    func preparedOnSecondRun() throws {
        let connection = try PostgreSQLConnection(connection: try PostgreSQLTestDatabase.connection())
        let sql = Self.uniqueSQL("select $1::int8 * 3")
        #expect(try connection.execute(sql, [.int64(1)]).int64(0, 0) == 3)
        #expect(try Self.preparedCount(connection, sql) == 0, "a statement seen once is not prepared")
        #expect(try connection.execute(sql, [.int64(2)]).int64(0, 0) == 6)
        #expect(try Self.preparedCount(connection, sql) == 1, "the second run prepared it")
        #expect(try connection.execute(sql, [.int64(3)]).int64(0, 0) == 9)
        #expect(try Self.preparedCount(connection, sql) == 1, "later runs use the one prepared statement")
    }

    @Test("a prepared statement is planned for each run's values, never by a generic plan fixed while its table was empty")
    func plannedForEachRun() throws {
        let schema = try PostgreSQLTestSchema()
        let connection = try PostgreSQLConnection(connection: schema.connection)
        try connection.execute("create table lookups (owner text, key text, primary key (owner, key))")
        let sql = Self.uniqueSQL("select count(*)::int8 from lookups where owner = $1 and key = any($2::text[])")
        // Eight runs on the empty table: more than the five after which PostgreSQL may settle on a generic plan.
        for _ in 0..<8 { #expect(try connection.execute(sql, [.text("u"), .textArray(["k1"])]).int64(0, 0) == 0) }
        try connection.execute("insert into lookups select 'u', 'k' || n from generate_series(1, 5000) as n")
        try connection.execute("analyze lookups")
        #expect(try connection.execute(sql, [.text("u"), .textArray(["k1", "k2", "none"])]).int64(0, 0) == 2)
        let plans = try connection.execute("""
            select coalesce(sum(generic_plans), 0)::int8, coalesce(sum(custom_plans), 0)::int8 from pg_prepared_statements where statement = $1
            """, [.text(sql)])
        #expect(try plans.int64(0, 0) == 0, "no run used a generic plan")
        #expect(try plans.int64(0, 1) == 8, "every run but the first (sent unnamed) was planned for its values")
    }

    @Test("a connection told not to prepare never prepares a statement")
    func preparingTurnedOff() throws {
        let connection = try PostgreSQLConnection(connection: try PostgreSQLTestDatabase.connection(), preparesStatements: false)
        let sql = Self.uniqueSQL("select $1::int8 + 1")
        for value in 0..<4 { #expect(try connection.execute(sql, [.int64(Int64(value))]).int64(0, 0) == Int64(value) + 1) }
        _ = try connection.pipeline([PostgreSQLStatement(sql, [.int64(5)]), PostgreSQLStatement(sql, [.int64(6)])])
        #expect(try connection.execute("select count(*)::int8 from pg_prepared_statements").int64(0, 0) == 0)
    }

    @Test("the same text sent with parameters of another type is prepared as another statement and reads its parameters by their own type")
    func parameterTypesAreTheKey() throws {
        let connection = try PostgreSQLConnection(connection: try PostgreSQLTestDatabase.connection())
        let sql = Self.uniqueSQL("select $1::text")
        for _ in 0..<3 {
            #expect(try connection.execute(sql, [.int64(42)]).text(0, 0) == "42")
            #expect(try connection.execute(sql, [.text("forty-two")]).text(0, 0) == "forty-two")
        }
        #expect(try Self.preparedCount(connection, sql) == 2)
    }

    @Test("a prepare that fails reports the statement's own error, and the statement is prepared once it can be")
    func failedPrepareIsNotRemembered() throws {
        let schema = try PostgreSQLTestSchema()
        let connection = try PostgreSQLConnection(connection: schema.connection)
        let sql = Self.uniqueSQL("select count(*)::int8 from later_table where n = $1")
        for _ in 0..<2 {
            do {
                _ = try connection.execute(sql, [.int64(1)])
                Issue.record("a statement on a missing table ran")
            } catch {
                #expect(error.sqlState == "42P01", "\(error)")
            }
        }
        try connection.execute("create table later_table (n int8)")
        try connection.execute("insert into later_table values (1), (1), (2)")
        for _ in 0..<3 { #expect(try connection.execute(sql, [.int64(1)]).int64(0, 0) == 2) }
        #expect(try Self.preparedCount(connection, sql) == 1)
    }

    @Test("a statement prepared inside a transaction that rolls back stays prepared and runs afterwards")
    func preparedStatementOutlivesRollback() throws {
        let connection = try PostgreSQLConnection(connection: try PostgreSQLTestDatabase.connection())
        let sql = Self.uniqueSQL("select $1::int8 - 1")
        _ = try connection.execute(sql, [.int64(10)])
        try connection.execute("begin")
        #expect(try connection.execute(sql, [.int64(20)]).int64(0, 0) == 19)
        try connection.execute("rollback")
        #expect(try Self.preparedCount(connection, sql) == 1)
        #expect(try connection.execute(sql, [.int64(30)]).int64(0, 0) == 29)
    }

    @Test("a statement the session dropped behind the connection fails once as retryable, then runs and is prepared again")
    func deallocatedStatementRecovers() throws {
        let connection = try PostgreSQLConnection(connection: try PostgreSQLTestDatabase.connection())
        let sql = Self.uniqueSQL("select $1::int8 * 5")
        _ = try connection.execute(sql, [.int64(1)])
        _ = try connection.execute(sql, [.int64(1)])
        try connection.execute("deallocate all")
        do {
            _ = try connection.execute(sql, [.int64(2)])
            Issue.record("a deallocated statement ran")
        } catch {
            #expect(error.sqlState == "26000" && error.isRetryable, "\(error)")
        }
        #expect(try connection.execute(sql, [.int64(3)]).int64(0, 0) == 15, "the connection forgot its statements and sent this one unnamed")
        #expect(try connection.execute(sql, [.int64(4)]).int64(0, 0) == 20)
        #expect(try Self.preparedCount(connection, sql) == 1, "prepared again under a new name")
    }

    @Test("a pipeline prepares a statement it sends twice, and a failed prepare in a pipeline is that statement's error with the rest skipped")
    func pipelinePrepares() throws {
        let connection = try PostgreSQLConnection(connection: try PostgreSQLTestDatabase.connection())
        let sql = Self.uniqueSQL("select $1::int8 + 100")
        let twice = try connection.pipeline([PostgreSQLStatement(sql, [.int64(1)]), PostgreSQLStatement(sql, [.int64(2)]),
                                             PostgreSQLStatement(sql, [.int64(3)])])
        #expect(try twice.map { try $0.get().int64(0, 0) } == [101, 102, 103])
        #expect(try Self.preparedCount(connection, sql) == 1, "prepared by its second statement, run by name by its third")

        let broken = Self.uniqueSQL("select n from no_such_table where n = $1")
        _ = try? connection.execute(broken, [.int64(1)])
        let results = try connection.pipeline([PostgreSQLStatement("begin"), PostgreSQLStatement(broken, [.int64(1)]),
                                               PostgreSQLStatement(sql, [.int64(4)])])
        guard case .failure(let missing) = results[1], case .failure(let skipped) = results[2] else {
            Issue.record("expected the prepare's failure and a skipped statement, got \(results)")
            return
        }
        #expect(missing.sqlState == "42P01", "\(missing)")
        #expect(skipped.message.contains("skipped"), "\(skipped)")
        try connection.execute("rollback")
        #expect(try connection.execute(sql, [.int64(5)]).int64(0, 0) == 105)
        #expect(try Self.preparedCount(connection, broken) == 0)
    }

    @Test("a connection prepares at most its capacity of statements and sends the rest unnamed")
    func capacityBoundsPreparedStatements() throws {
        let connection = try PostgreSQLConnection(connection: try PostgreSQLTestDatabase.connection())
        let texts = (0..<80).map { Self.uniqueSQL("select $1::int8 + \($0)") }
        for (index, sql) in texts.enumerated() {
            for _ in 0..<2 { #expect(try connection.execute(sql, [.int64(1)]).int64(0, 0) == Int64(index) + 1) }
        }
        let prepared = try connection.execute("select count(*)::int8 from pg_prepared_statements").int64(0, 0)
        // The counting statement itself may be among them.
        #expect(prepared <= 64 && prepared >= 63, "\(prepared) statements prepared")
    }
}

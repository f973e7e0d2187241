import SyncJournalProtocol
import SyncJournalServer
import Testing

/// Statements sent in one round trip (libpq's pipeline mode), and pushes
/// that use it or, past its budget, send their statements one by one.
@Suite("PostgreSQL pipelines", .enabled(if: PostgreSQLTestDatabase.shouldRun, PostgreSQLTestDatabase.skipReason))
struct PostgreSQLPipelineTests {
    @Test("a pipeline answers each of its statements, in order, inside the transaction it begins")
    func answersInOrder() throws {
        let connection = try PostgreSQLConnection(connection: try PostgreSQLTestDatabase.connection())
        let results = try connection.pipeline([
            PostgreSQLStatement("begin isolation level repeatable read"),
            PostgreSQLStatement("select $1::int8 * 2", [.int64(21)]),
            PostgreSQLStatement("select current_setting('transaction_isolation')"),
            PostgreSQLStatement("commit"),
        ])
        #expect(results.count == 4)
        #expect(try results[1].get().int64(0, 0) == 42)
        #expect(try results[2].get().text(0, 0) == "repeatable read", "the statements ran inside the transaction the first began")
        #expect(try connection.execute("select 7::int8").int64(0, 0) == 7, "the connection serves plain statements afterwards")
    }

    @Test("a failed statement in a pipeline comes back with its SQLSTATE, the ones after it as skipped, and the connection serves the next statement after a rollback")
    func failureSkipsTheRest() throws {
        let connection = try PostgreSQLConnection(connection: try PostgreSQLTestDatabase.connection())
        let results = try connection.pipeline([
            PostgreSQLStatement("begin"),
            PostgreSQLStatement("select 1 / $1::int8", [.int64(0)]),
            PostgreSQLStatement("select 2::int8"),
        ])
        #expect(results.count == 3)
        #expect((try? results[0].get()) != nil)
        guard case .failure(let division) = results[1], case .failure(let skipped) = results[2] else {
            Issue.record("expected two failures, got \(results)")
            return
        }
        #expect(division.sqlState == "22012", "\(division)")
        #expect(skipped.sqlState == nil && skipped.message.contains("skipped"), "\(skipped)")
        #expect(!connection.isBroken)
        try connection.execute("rollback")
        #expect(try connection.execute("select 3::int8").int64(0, 0) == 3)
    }

    @Test("a pipeline on a closed connection fails as a lost connection")
    func closedConnection() throws {
        let connection = try PostgreSQLConnection(connection: try PostgreSQLTestDatabase.connection())
        connection.close()
        do {
            _ = try connection.pipeline([PostgreSQLStatement("select 1")])
            Issue.record("a closed connection ran a pipeline")
        } catch {
            #expect(error.connectionLost && error.isConnectionFailure, "\(error)")
        }
    }

    @Test("a push past the pipeline's budget (statements sent one by one) answers exactly as pushes that fit in one round trip, first time and on a resend")
    func largeAndSmallPushesAgree() throws {
        let schema = try PostgreSQLTestSchema()
        let storage = try PostgreSQLStorage(connection: schema.connection, clock: { 1_000 })
        // 400 creates with 64-byte ids take the statements past the budget; a
        // refused mutation (a 200-byte kind) rides along.
        let long = { (index: Int) in String(repeating: "x", count: 57) + String(1_000_000 + index) }
        var large = (0..<400).map { Mutations.create(long($0), ["n": .int(Int64($0))]) }
        large.append(Mutations.create("bad", kind: String(repeating: "k", count: 200)))
        #expect(!PostgreSQLStorage.opensInOneRoundTrip(large))
        let first = try storage.push(user: "u1", large)
        let resend = try storage.push(user: "u1", large)
        #expect(first == resend, "a resend is answered from memory")
        #expect(first.prefix(400).allSatisfy { $0.outcome.appliedRow != nil })
        guard case .rejected = first[400].outcome else {
            Issue.record("the over-long kind was not rejected: \(first[400].outcome)")
            return
        }
        // The same mutations of another kind, for another user, in small pushes, give the same outcomes.
        var small: [MutationResult] = []
        for start in stride(from: 0, to: large.count, by: 50) {
            let chunk = Array(large[start..<min(start + 50, large.count)]).map { mutation in
                Mutation(operationID: .random(), kind: mutation.kind == "pin" ? "card" : mutation.kind, op: mutation.op, recordID: mutation.recordID,
                         fields: mutation.fields, baseUpdatedAt: mutation.baseUpdatedAt)
            }
            #expect(PostgreSQLStorage.opensInOneRoundTrip(chunk))
            small += try storage.push(user: "u2", chunk)
        }
        #expect(small.map { $0.outcome.appliedRow != nil } == first.map { $0.outcome.appliedRow != nil })
        let page = try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 1_000))
        #expect(page.rows.count == 400)
        let remembered = try PostgreSQLConnection(connection: schema.connection).execute("select count(*)::int8 from operations where owner = 'u1'")
        #expect(try remembered.int64(0, 0) == 400)
    }
}

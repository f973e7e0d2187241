import Testing
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import SyncJournalWire

@Suite("storage failures become typed errors and JSON replies, never a crash")
struct StorageFailureTests {
    @Test("a database locked past the busy timeout is StorageError.unavailable naming SQLITE_BUSY, and nothing is applied")
    func busy() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-server"); defer { directory.remove() }
        let path = directory.file("busy.sqlite")
        let storage = try SQLiteStorage(path: path, busyTimeoutMilliseconds: 50)
        let holder = try SQLiteDatabase(path: path)
        try holder.execute("begin immediate")
        #expect {
            try storage.push(user: "u1", [Mutations.create("p1")])
        } throws: { error in
            guard case StorageError.unavailable(let reason) = error else { return false }
            return reason.contains("database is locked (code 5)") && reason.contains(path)
        }
        try holder.execute("rollback")
        #expect(try storage.push(user: "u1", [Mutations.create("p1")]).first?.outcome.appliedRow != nil)
        #expect(try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10)).rows.count == 1)
    }

    @Test("a stored row that does not decode is a 500 internal JSON reply, and the server keeps serving")
    func corruptRow() throws {
        let fixture = try SyncServerFixture()
        _ = try fixture.push([Mutations.create("p1")])
        let database = try SQLiteDatabase(path: fixture.server.options.databasePath)
        try database.execute("update rows set fields = x'FFFF' where id = 'p1'")
        database.close()
        let pull = PullRequestCodec.encode(PullRequest(cursors: ["pin": nil], limit: 10))
        let response = try fixture.send("/v1/sync/pull", body: pull)
        #expect(response.status == 500)
        #expect(try SyncServerFixture.error(response).code == .internal)
        let health = try RawClient(port: fixture.port)
        try health.send("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try health.readResponse().status == 200)
        #expect(try fixture.send("/v1/sync/pull", body: PullRequestCodec.encode(PullRequest(cursors: ["note": nil], limit: 10))).status == 200)
    }

    @Test("a failing statement carries the SQLite code, message, context and file")
    func typedSQLiteError() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-server"); defer { directory.remove() }
        let database = try SQLiteDatabase(path: directory.file("x.sqlite"))
        #expect {
            try database.execute("select * from no_such_table")
        } throws: { error in
            guard let error = error as? SQLiteError else { return false }
            return error.code == 1 && error.message.contains("no_such_table") && error.context.hasPrefix("exec select")
                && error.path.hasSuffix("x.sqlite")
        }
    }
}

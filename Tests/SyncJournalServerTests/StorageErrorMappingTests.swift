import Testing
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalWire

/// How a database failure is classified: what the request's data caused is
/// a 400 (resending cannot help), what may pass is a 503, the rest a 500.
@Suite("storage failures caused by a request's data are a 400, never a 500")
struct StorageErrorMappingTests {
    static func postgres(_ state: String?) -> PostgreSQLError {
        PostgreSQLError(sqlState: state, message: "index row size 4016 exceeds btree version 4 maximum 2704", context: "insert into rows", connection: "dbname=sync")
    }

    static func status(of error: StorageError) throws -> (Int, ErrorBody) {
        var users = UserDirectory()
        try users.add(token: "t-alice", user: "alice")
        let router = SyncRouter(storage: RecordingStorage(failing: error), users: users)
        let response = router.respond(to: HTTPRequest(method: "POST", target: "/v1/sync/push",
                                                      headers: [HTTPHeader(name: "Authorization", value: "Bearer t-alice")],
                                                      body: Array(#"{"mutations":[]}"#.utf8)))
        return (response.status, try ErrorBodyCodec.decode(response.body))
    }

    @Test("PostgreSQL program limits (class 54) and data exceptions (class 22) are 400 bad_request naming the SQLSTATE; others keep their class",
          arguments: [("54000", 400), ("22021", 400), ("22P05", 400), ("23502", 500), ("XX000", 500), ("40001", 503), ("57P01", 503)])
    func postgresClasses(state: String, expected: Int) throws {
        let (status, body) = try Self.status(of: StorageError(postgres: Self.postgres(state)))
        #expect(status == expected)
        if expected == 400 {
            #expect(body.code == .badRequest)
            #expect(body.message.contains("sqlstate \(state)"))
            #expect(body.message.hasSuffix("nothing of it was applied"))
        }
    }

    @Test("SQLite's too-big result is 400 bad_request; a busy database stays 503 and an I/O error 500",
          arguments: [(Int32(18), 400), (Int32(5), 503), (Int32(10), 500)])
    func sqliteCodes(code: Int32, expected: Int) throws {
        let error = SQLiteError(code: code, message: "string or blob too big", context: "step insert into rows", path: "sync.sqlite")
        #expect(try Self.status(of: StorageError(sqlite: error)).0 == expected)
    }

    @Test("a user name past the storage's key budget, or holding U+0000, is refused when the server is configured")
    func userNames() throws {
        var users = UserDirectory()
        try users.add(token: "t1", user: String(repeating: "u", count: UserDirectory.maximumUserBytes))
        #expect(throws: UserDirectoryError.self) { try users.add(token: "t2", user: String(repeating: "u", count: UserDirectory.maximumUserBytes + 1)) }
        #expect(throws: UserDirectoryError.self) { try users.add(token: "t3", user: "a\u{0}b") }
        #expect(users.count == 1)
    }
}

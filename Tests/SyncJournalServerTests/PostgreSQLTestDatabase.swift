import SyncJournalTestSupport
import Testing

/// The PostgreSQL server the PostgreSQL tests use: the test process's one
/// server (``TestPostgreSQLServer``), with the skip comment these tests give.
enum PostgreSQLTestDatabase {
    /// The connection string, or why there is none.
    static var server: Result<String, TestPostgreSQLServer.Unavailable> { TestPostgreSQLServer.connection }

    /// Whether the PostgreSQL tests run: a server is there, or its absence must fail them.
    static var shouldRun: Bool { TestPostgreSQLServer.shouldRun }

    /// The skip comment when they do not run.
    static var skipReason: Comment {
        if case .failure(let reason) = server { return "PostgreSQL unavailable, PostgreSQL tests SKIPPED: \(reason)" }
        return "PostgreSQL available"
    }

    /// The server's connection string, or a thrown reason (the test fails).
    static func connection() throws -> String {
        try server.get()
    }
}

import Testing
import SyncJournalServer

/// libpq failures that need no server.
@Suite("PostgreSQL connection without a server")
struct PostgreSQLConnectionTests {
    @Test("an unreachable database is 503 unavailable naming the connection without its password, not a crash")
    func unreachable() {
        do {
            _ = try PostgreSQLStorage(connection: "host=127.0.0.1 port=1 dbname=nothing password=secret connect_timeout=5")
            Issue.record("connected to port 1")
        } catch {
            guard case .unavailable(let reason) = error else {
                Issue.record("expected unavailable, got \(error)")
                return
            }
            #expect(reason.contains("port=1") && reason.contains("dbname=nothing"), "\(reason)")
            #expect(!reason.contains("secret"), "\(reason)")
        }
    }

    @Test("the redacted connection string drops the password, in keyword form and in a URI, and never echoes what libpq cannot parse")
    func redaction() {
        let keywords = PostgreSQLConnection.redact("host=db password=secret dbname=sync")
        #expect(keywords.contains("host=db") && keywords.contains("dbname=sync") && !keywords.contains("secret"), "\(keywords)")
        #expect(!PostgreSQLConnection.redact("postgresql://alice:secret@db:5432/sync").contains("secret"))
        #expect(PostgreSQLConnection.redact("postgresql://alice:secret@db:5432/sync").contains("host=db"))
        #expect(PostgreSQLConnection.redact("host='unterminated password=secret") == "(a connection string libpq cannot parse)")
    }
}

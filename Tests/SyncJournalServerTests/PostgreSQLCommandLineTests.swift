import Testing
import SyncJournalServer

/// `sync-server --postgres CONNINFO` on the command line (no server needed).
@Suite("sync-server --postgres on the command line")
struct PostgreSQLCommandLineTests {
    @Test("--postgres selects PostgreSQL, SQLite stays the default, and --db with --postgres is a usage error")
    func parsing() throws {
        guard case .run(let options) = try SyncServerCommandLine.parse(["--postgres", "host=db dbname=sync", "--port", "0"]) else {
            Issue.record("not a run")
            return
        }
        #expect(options.postgresConnection == "host=db dbname=sync")
        guard case .run(let defaults) = try SyncServerCommandLine.parse([]) else {
            Issue.record("not a run")
            return
        }
        #expect(defaults.postgresConnection == nil && defaults.databasePath == "./sync-server.sqlite")
        #expect(throws: SyncServerError.self) { try SyncServerCommandLine.parse(["--postgres", "dbname=sync", "--db", "x.sqlite"]) }
        #expect(throws: SyncServerError.self) { try SyncServerCommandLine.parse(["--postgres", ""]) }
        #expect(throws: SyncServerError.self) { try SyncServerCommandLine.parse(["--postgres"]) }
    }

    @Test("a server whose database cannot be reached does not start: a storage error (exit 73) without the password")
    func unreachableServer() {
        var options = SyncServerOptions()
        options.port = 0
        options.postgresConnection = "host=127.0.0.1 port=1 dbname=nothing password=secret connect_timeout=5"
        do {
            _ = try SyncServer(options: options)
            Issue.record("started without a database")
        } catch {
            #expect(error.exitStatus == 73)
            #expect(!error.description.contains("secret") && error.description.contains("port=1"), "\(error)")
        }
    }
}

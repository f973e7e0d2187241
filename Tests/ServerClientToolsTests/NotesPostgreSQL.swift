import Foundation
import SyncJournalTestSupport
import Testing

/// The PostgreSQL server `sync-server --postgres` runs against in the notes
/// tests: the test process's one server (``TestPostgreSQLServer``).
///
/// Each test gets a schema of its own (``Schema``), made and dropped with `psql`.
enum NotesPostgreSQL {
    typealias Unavailable = TestPostgreSQLServer.Unavailable

    /// The connection string, or why there is none.
    static var server: Result<String, Unavailable> { TestPostgreSQLServer.connection }

    /// Whether the PostgreSQL tests run: a server is there, or its absence must fail them.
    static var shouldRun: Bool { TestPostgreSQLServer.shouldRun }

    /// A schema of its own, for one test: its connection string sets
    /// `search_path` to it, so the server's tables start empty.
    final class Schema {
        let name: String
        let connection: String
        private let server: String

        init() throws {
            server = try NotesPostgreSQL.server.get()
            name = "notes_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            try NotesPostgreSQL.psql(server, "create schema \(name)")
            connection = server + " options='-c search_path=\(name)'"
        }

        deinit { try? NotesPostgreSQL.psql(server, "drop schema \(name) cascade") }
    }

    /// Runs one SQL command with `psql` against `connection`.
    static func psql(_ connection: String, _ command: String) throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", connection, "-c", command]
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Unavailable(description: "psql \(command): " + String(decoding: message, as: UTF8.self))
        }
    }
}

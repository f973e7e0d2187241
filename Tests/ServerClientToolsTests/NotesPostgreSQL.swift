import Foundation
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// The PostgreSQL server `sync-server --postgres` runs against in the notes
/// tests, found once per test process, as the server tests find theirs:
///
/// - `SYNCJOURNAL_TEST_POSTGRES=CONNINFO`: that server (keyword/value form);
/// - otherwise a throwaway cluster from tools/pg-test-cluster.sh, stopped
///   when the test process exits;
/// - neither: the tests are skipped with the reason, unless
///   `SYNCJOURNAL_REQUIRE_POSTGRES=1`, which makes them run and fail.
///
/// Each test gets a schema of its own (``schema()``), made and dropped with `psql`.
enum NotesPostgreSQL {
    /// The connection string, or why there is none.
    static let server: Result<String, Unavailable> = find()

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// Whether the PostgreSQL tests run: a server is there, or its absence must fail them.
    static var shouldRun: Bool {
        if case .success = server { return true }
        return ProcessInfo.processInfo.environment["SYNCJOURNAL_REQUIRE_POSTGRES"] == "1"
    }

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

    private static func find() -> Result<String, Unavailable> {
        if let given = ProcessInfo.processInfo.environment["SYNCJOURNAL_TEST_POSTGRES"], !given.isEmpty { return .success(given) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("tools/pg-test-cluster.sh").path
        guard let directory = try? TemporaryDirectory(prefix: "syncjournal-notes-pg") else {
            return .failure(Unavailable(description: "no temporary directory for a throwaway cluster"))
        }
        let base = directory.file("cluster")
        let state = base + ".state"
        // system(), not Process: the server pg_ctl leaves running inherits the
        // shell's descriptors, and its output goes to files, so nothing waits on a pipe.
        // The owner pid leaves a guard that stops the cluster if this process is
        // killed before its exit handler runs.
        let status = system("PG_TEST_CLUSTER_OWNER_PID=\(ProcessInfo.processInfo.processIdentifier) PG_TEST_CLUSTER_STATE='\(state)' /bin/bash '\(script)' start >'\(base).out' 2>'\(base).err'")
        let output = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let failure = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        guard status == 0, let line = output.split(separator: "\n").last, !line.isEmpty else {
            directory.remove()
            return .failure(Unavailable(description: "SYNCJOURNAL_TEST_POSTGRES is not set and tools/pg-test-cluster.sh start failed (status \(status)): "
                                        + failure.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        stopCommand = "PG_TEST_CLUSTER_STATE='\(state)' /bin/bash '\(script)' stop >/dev/null 2>&1; rm -rf '\(directory.path)'"
        atexit {
            guard let command = NotesPostgreSQL.stopCommand else { return }
            _ = system(command)
        }
        return .success(String(line))
    }

    /// The shell command that stops the cluster this process started (run at exit).
    nonisolated(unsafe) private static var stopCommand: String?
}

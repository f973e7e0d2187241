import Foundation
import SyncJournalPlatform
import SyncJournalTesting
import SyncJournalServer
import Testing

/// The PostgreSQL server the PostgreSQL tests use, found once per test process.
///
/// - `SYNCJOURNAL_TEST_POSTGRES=CONNINFO`: use that server (keyword/value form).
/// - otherwise: start a throwaway cluster with tools/pg-test-cluster.sh
///   (stopped when the test process exits).
/// - if neither works, the PostgreSQL tests are skipped with the reason —
///   unless `SYNCJOURNAL_REQUIRE_POSTGRES=1` (CI sets it), which makes them
///   run and fail on the missing server instead.
enum PostgreSQLTestDatabase {
    /// The connection string, or why there is none.
    static let server: Result<String, Unavailable> = find()

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// Whether CI demands a real server.
    static var isRequired: Bool { ProcessInfo.processInfo.environment["SYNCJOURNAL_REQUIRE_POSTGRES"] == "1" }

    /// Whether the PostgreSQL tests run: a server is there, or its absence must fail them.
    static var shouldRun: Bool {
        if case .success = server { return true }
        return isRequired
    }

    /// The skip comment when they do not run.
    static var skipReason: Comment {
        if case .failure(let reason) = server { return "PostgreSQL unavailable, PostgreSQL tests SKIPPED: \(reason)" }
        return "PostgreSQL available"
    }

    /// The server's connection string, or a thrown reason (the test fails).
    static func connection() throws -> String {
        switch server {
        case .success(let connection): return connection
        case .failure(let reason): throw reason
        }
    }

    private static func find() -> Result<String, Unavailable> {
        if let given = ProcessInfo.processInfo.environment["SYNCJOURNAL_TEST_POSTGRES"], !given.isEmpty {
            return .success(given)
        }
        return startThrowawayCluster()
    }

    /// The shell command that stops the cluster this process started (run by the exit handler).
    nonisolated(unsafe) private static var ownClusterStopCommand: String?

    private static let script: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("tools/pg-test-cluster.sh").path
    }()

    private static func startThrowawayCluster() -> Result<String, Unavailable> {
        guard FileManager.default.isExecutableFile(atPath: script) else {
            return .failure(Unavailable(description: "SYNCJOURNAL_TEST_POSTGRES is not set and \(script) is missing"))
        }
        guard let directory = try? TemporaryDirectory(prefix: "syncjournal-pg-tests") else {
            return .failure(Unavailable(description: "SYNCJOURNAL_TEST_POSTGRES is not set and no temporary directory could be made for a cluster"))
        }
        let base = directory.file("cluster")
        let state = base + ".state"
        // system(), not Process: the server pg_ctl leaves running inherits the
        // shell's descriptors, and output goes to files, so nothing waits on a pipe.
        // The owner pid leaves a guard that stops the cluster if this process is
        // killed before its exit handler runs.
        let status = system("PG_TEST_CLUSTER_OWNER_PID=\(ProcessInfo.processInfo.processIdentifier) PG_TEST_CLUSTER_STATE=\(quoted(state)) /bin/bash \(quoted(script)) start >\(quoted(base + ".out")) 2>\(quoted(base + ".err"))")
        let output = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let failure = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: base + ".out")
        try? FileManager.default.removeItem(atPath: base + ".err")
        guard status == 0, let line = output.split(separator: "\n").last, !line.isEmpty else {
            directory.remove()
            return .failure(Unavailable(description: "SYNCJOURNAL_TEST_POSTGRES is not set and tools/pg-test-cluster.sh start failed (status \(status)): "
                                        + failure.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        // The stop command also removes the directory that held the cluster's state file.
        ownClusterStopCommand = "PG_TEST_CLUSTER_STATE=\(quoted(state)) /bin/bash \(quoted(script)) stop >/dev/null 2>&1; rm -rf \(quoted(directory.path))"
        atexit {
            guard let command = PostgreSQLTestDatabase.ownClusterStopCommand else { return }
            _ = system(command)
        }
        return .success(String(line))
    }

    /// `text` in single quotes for the shell (paths made here, quoted anyway).
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

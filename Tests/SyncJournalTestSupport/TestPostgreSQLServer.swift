import Foundation
import SyncJournalTesting

/// The PostgreSQL server the tests of PostgreSQL storage run against, found
/// once per test process and shared by every test module in it:
///
/// - `SYNCJOURNAL_TEST_POSTGRES=CONNINFO`: that server (keyword/value form);
/// - otherwise a throwaway cluster from tools/pg-test-cluster.sh, stopped when
///   the test process exits, or by the script's guard if it is killed first;
/// - neither: the tests are skipped with the reason, unless
///   `SYNCJOURNAL_REQUIRE_POSTGRES=1` (CI sets it), which makes them run and
///   fail on the missing server instead.
package enum TestPostgreSQLServer {
    /// The connection string, or why there is none.
    package static let connection: Result<String, Unavailable> = find()

    /// Why there is no server, or why a command against it failed.
    package struct Unavailable: Error, CustomStringConvertible {
        package var description: String
        package init(description: String) { self.description = description }
    }

    /// Whether CI demands a real server.
    package static var isRequired: Bool { ProcessInfo.processInfo.environment["SYNCJOURNAL_REQUIRE_POSTGRES"] == "1" }

    /// Whether the PostgreSQL tests run: a server is there, or its absence must fail them.
    package static var shouldRun: Bool {
        if case .success = connection { return true }
        return isRequired
    }

    private static func find() -> Result<String, Unavailable> {
        if let given = ProcessInfo.processInfo.environment["SYNCJOURNAL_TEST_POSTGRES"], !given.isEmpty {
            return .success(given)
        }
        return startThrowawayCluster()
    }

    /// The shell command that stops the cluster this process started (run by the exit handler).
    nonisolated(unsafe) private static var stopCommand: String?

    private static func startThrowawayCluster() -> Result<String, Unavailable> {
        let script = BuiltTool.packageRoot.appendingPathComponent("tools/pg-test-cluster.sh").path
        guard FileManager.default.isExecutableFile(atPath: script) else {
            return .failure(Unavailable(description: "SYNCJOURNAL_TEST_POSTGRES is not set and \(script) is missing"))
        }
        guard let directory = try? TemporaryDirectory(prefix: "syncjournal-pg-tests") else {
            return .failure(Unavailable(description: "SYNCJOURNAL_TEST_POSTGRES is not set and no temporary directory could be made for a cluster"))
        }
        let base = directory.file("cluster")
        let state = base + ".state"
        // system(), not a child process with pipes: the server pg_ctl leaves
        // running inherits the shell's descriptors, and output goes to files,
        // so nothing waits on a pipe. The owner pid leaves a guard that stops
        // the cluster if this process is killed before its exit handler runs.
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
        stopCommand = "PG_TEST_CLUSTER_STATE=\(quoted(state)) /bin/bash \(quoted(script)) stop >/dev/null 2>&1; rm -rf \(quoted(directory.path))"
        atexit {
            guard let command = TestPostgreSQLServer.stopCommand else { return }
            _ = system(command)
        }
        return .success(String(line))
    }

    /// `text` in single quotes for the shell (paths made here, quoted anyway).
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif
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

    /// The state file of the cluster this process started (read by the exit handler).
    nonisolated(unsafe) private static var ownClusterState: String?

    private static let script: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("tools/pg-test-cluster.sh").path
    }()

    private static func startThrowawayCluster() -> Result<String, Unavailable> {
        guard FileManager.default.isExecutableFile(atPath: script) else {
            return .failure(Unavailable(description: "SYNCJOURNAL_TEST_POSTGRES is not set and \(script) is missing"))
        }
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("syncjournal-pg-tests-\(getpid())-\(UUID().uuidString)").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script, "start"]
        process.environment = ProcessInfo.processInfo.environment.merging(["PG_TEST_CLUSTER_STATE": state]) { _, new in new }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do { try process.run() } catch {
            return .failure(Unavailable(description: "cannot run \(script): \(error)"))
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let failure = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0, let line = text.split(separator: "\n").last, !line.isEmpty else {
            return .failure(Unavailable(description: "SYNCJOURNAL_TEST_POSTGRES is not set and tools/pg-test-cluster.sh start failed: "
                                        + failure.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        ownClusterState = state
        atexit {
            guard let state = PostgreSQLTestDatabase.ownClusterState else { return }
            let stop = Process()
            stop.executableURL = URL(fileURLWithPath: "/bin/bash")
            stop.arguments = [PostgreSQLTestDatabase.script, "stop"]
            stop.environment = ["PG_TEST_CLUSTER_STATE": state, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
            try? stop.run()
            stop.waitUntilExit()
        }
        return .success(String(line))
    }
}

import Foundation
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

@Suite("sync-demo, sync-sim and sync-load against a running sync-server binary")
struct ClientToolsAgainstServerTests {
    @Test("sync-server with no users starts in development mode and says so; sync-demo --server passes every check, twice on one database")
    func demoAgainstServer() throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-clients"); defer { scratch.remove() }
        let server = try RunningSyncServer(database: scratch.file("server.sqlite"))
        #expect(server.readyLine.contains("DEVELOPMENT MODE"), "\(server.readyLine)")
        for run in 1...2 {
            let result = try BuiltTool.run("sync-demo", ["--dir", scratch.file("demo\(run)"), "--server", server.url], in: scratch.url)
            #expect(result.status == 0, "run \(run): \(result.standardOutput)\(result.standardError)")
            #expect(result.standardOutput.contains("All 28 checks held."), "run \(run): \(result.standardOutput)")
            #expect(!result.standardOutput.contains("✗"))
            #expect(result.standardOutput.contains("sync-server at \(server.url)"))
            for step in 1...10 { #expect(result.standardOutput.contains("\n\(step). "), "step \(step) missing") }
        }
    }

    @Test("sync-demo --server with nothing listening prints one line and exits 69; a refused token exits 69 too")
    func demoWithoutServer() throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-clients"); defer { scratch.remove() }
        let nothing = try BuiltTool.run("sync-demo", ["--dir", scratch.file("demo"), "--server", "http://127.0.0.1:1"], in: scratch.url)
        #expect(nothing.status == 69)
        #expect(nothing.standardOutput.isEmpty)
        #expect(nothing.standardError.hasPrefix("sync-demo: cannot reach sync-server at http://127.0.0.1:1"))
        #expect(nothing.standardError.split(separator: "\n").count == 1, "\(nothing.standardError)")
        let server = try RunningSyncServer(database: scratch.file("server.sqlite"))
        let refused = try BuiltTool.run("sync-demo", ["--dir", scratch.file("demo"), "--server", server.url, "--token", "wrong"], in: scratch.url)
        #expect(refused.status == 69)
        #expect(refused.standardError.contains("401"), "\(refused.standardError)")
    }

    @Test("sync-sim --server: a short run with every client-side fault ends with no violation, converged, and says it is not byte-deterministic")
    func simulatorAgainstServer() throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-clients"); defer { scratch.remove() }
        let server = try RunningSyncServer(database: scratch.file("server.sqlite"))
        for seed in ["1", "2"] {
            let result = try BuiltTool.run("sync-sim", ["--seed", seed, "--devices", "3", "--steps", "60", "--server", server.url], in: scratch.url)
            #expect(result.status == 0, "seed \(seed): \(result.standardOutput)\(result.standardError)")
            #expect(result.standardOutput.contains("all held, converged"), "\(result.standardOutput)")
            #expect(result.standardOutput.contains("not byte-deterministic"))
        }
    }

    @Test("sync-load: a one-second run against sync-server reports pushes and pulls and no errors")
    func loadSmoke() throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-clients"); defer { scratch.remove() }
        let server = try RunningSyncServer(database: scratch.file("server.sqlite"))
        let result = try BuiltTool.run("sync-load", ["--server", server.url, "--clients", "2", "--seconds", "1", "--batch", "10"], in: scratch.url)
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        func count(_ label: String) -> Int? { Self.count(label, in: result.standardOutput) }
        #expect((count("pushes") ?? 0) > 0, "\(result.standardOutput)")
        #expect((count("pulls") ?? 0) > 0, "\(result.standardOutput)")
        #expect(count("errors") == 0, "\(result.standardOutput)")
    }

    @Test("sync-load --client plain: pushes and pulls go through the plain HTTP client, each pull reads back the records of the push before it, and no errors")
    func loadSmokePlainClient() throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-clients"); defer { scratch.remove() }
        let server = try RunningSyncServer(database: scratch.file("server.sqlite"))
        let result = try BuiltTool.run("sync-load", ["--server", server.url, "--client", "plain", "--clients", "2", "--seconds", "1",
                                                     "--batch", "10", "--pull-limit", "10000"], in: scratch.url)
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("plain HTTP client"), "\(result.standardOutput)")
        func count(_ label: String) -> Int? { Self.count(label, in: result.standardOutput) }
        #expect((count("pushes") ?? 0) > 0, "\(result.standardOutput)")
        #expect((count("pulls") ?? 0) > 0, "\(result.standardOutput)")
        #expect(count("errors") == 0, "\(result.standardOutput)")
        // Each pull follows its push on the client's own kind, so it reads exactly that push's 10 records.
        let rows = result.standardOutput.split(separator: "\n").first { $0.hasPrefix("pulls") }
            .flatMap { $0.split(separator: ",").first { $0.contains("rows") } }
            .flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } }
        #expect(rows != nil && rows == (count("pulls") ?? 0) * 10, "\(result.standardOutput)")
    }

    @Test("sync-load --client plain counts a refused push as an error with its status and reason, keeps going, and exits 1")
    func plainClientCountsRefusals() throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-clients"); defer { scratch.remove() }
        let server = try RunningSyncServer(database: scratch.file("server.sqlite"), arguments: ["--max-batch", "5"])
        let result = try BuiltTool.run("sync-load", ["--server", server.url, "--client", "plain", "--clients", "1", "--seconds", "1",
                                                     "--batch", "10"], in: scratch.url)
        #expect(result.status == 1, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("/v1/sync/push: HTTP 413"), "\(result.standardOutput)")
        let pulls = result.standardOutput.split(separator: "\n").first { $0.hasPrefix("pulls") }
            .flatMap { $0.split(separator: " ").dropFirst().first { !$0.isEmpty }.flatMap { Int($0) } }
        #expect((pulls ?? 0) > 1, "the client went on pulling after refused pushes: \(result.standardOutput)")
    }

    @Test("sync-load --live-latency: every edit on one device reaches the other's observed query, and the percentiles are printed")
    func liveLatency() throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-clients"); defer { scratch.remove() }
        let server = try RunningSyncServer(database: scratch.file("server.sqlite"))
        let result = try BuiltTool.run("sync-load", ["--server", server.url, "--live-latency", "5"], in: scratch.url)
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains(": 5 edits on device A"), "\(result.standardOutput)")
        let percentiles = result.standardOutput.split(separator: "\n").first { $0.hasPrefix("p50 ") }
        #expect(percentiles?.contains(" p95 ") == true && percentiles?.contains(" max ") == true, "\(result.standardOutput)")
    }

    @Test("sync-load with nothing listening prints one line and exits 69")
    func loadWithoutServer() throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-clients"); defer { scratch.remove() }
        let result = try BuiltTool.run("sync-load", ["--server", "http://127.0.0.1:1", "--seconds", "1"], in: scratch.url)
        #expect(result.status == 69)
        #expect(result.standardError.hasPrefix("sync-load: cannot reach http://127.0.0.1:1"))
    }

    /// The number after `label` at the start of a line of a sync-load report.
    static func count(_ label: String, in report: String) -> Int? {
        guard let line = report.split(separator: "\n").first(where: { $0.hasPrefix(label) }) else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }
}

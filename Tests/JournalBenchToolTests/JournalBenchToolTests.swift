import JournalBenchTool
import Testing

/// `journal-bench --quick --json` in-process with tiny sizes: checks the
/// shape of the JSON and that every workload and baseline appears. Never a
/// timed assertion: the figures themselves are not checked.
@Suite("journal-bench")
struct JournalBenchToolTests {
    static let workloads = ["durable-edit", "group-commit", "crash-durable", "replay", "checkpoint", "push", "open", "memory", "indexed-query", "upkeep", "backlog"]
    static let baselines = ["sqlite-wal-full-1-row-per-txn", "raw-fdatasync-preallocated", "raw-fdatasync-growing",
                            "sqlite-wal-full-64-rows-per-txn", "raw-64-per-fdatasync-preallocated", "raw-64-per-fdatasync-growing",
                            "sqlite-wal-normal-1-row-per-txn", "raw-buffered-write", "page-cached-read",
                            "journal-a-quarter-as-long", "sequential-write-fsync", "device-only-server-keeps-nothing",
                            "the-same-state-checkpointed", "full-scan", "the-same-store-without-indexes",
                            "a-fresh-checkpoint-of-the-same-state", "no-checkpoint-running", "nothing-queued"]

    @Test("--quick --only query runs the indexed-query workload: the indexed lookup and the full scan, in the same run")
    func quickIndexedQuery() async throws {
        let result = await JournalBenchCommand.main(["--quick", "--only", "query", "--json"])
        #expect(result.status == 0, "\(result.errors)")
        #expect(Set(result.entries.map(\.name)) == ["indexed-query"])
        let lookup = try #require(result.entries.first { $0.unit == "queries/s" })
        #expect(lookup.figure.contains("100 of 10,000") || lookup.figure.contains("100 of 10000"))
        #expect(lookup.baselines.map(\.name) == ["full-scan"])
        #expect(lookup.hasGoal)
        #expect(result.output.contains("\"name\": \"indexed-query\""))
    }

    @Test("a tiny --quick --json run reports every workload and baseline")
    func quickJSON() async throws {
        var configuration = JournalBenchCommand.Configuration.quick
        configuration.json = true
        configuration.durableEdits = 20
        configuration.groupEdits = 128
        configuration.editors = 8
        configuration.bulkEdits = 500
        configuration.sqliteNormalRows = 20
        configuration.replayOperations = 800
        configuration.replayLiveRecords = 50
        configuration.checkpointOperations = 400
        configuration.openOperations = 400
        configuration.pushOperations = 200
        configuration.memoryOperations = 200
        configuration.queryRecords = 1_000
        configuration.queryMatches = 10
        configuration.upkeepEdits = 400
        configuration.upkeepLiveRecords = 50
        configuration.upkeepEditors = 4
        let entries = try await JournalBenchCommand.run(configuration)
        let json = JournalBenchCommand.json(entries)

        #expect(json.hasPrefix("{\"workloads\": ["))
        #expect(json.hasSuffix("]}\n"))
        for name in Self.workloads { #expect(json.contains("\"name\": \"\(name)\""), "workload \(name)") }
        for name in Self.baselines { #expect(json.contains("\"\(name)\":"), "baseline \(name)") }
        #expect(Set(entries.map(\.name)) == Set(Self.workloads))
        for entry in entries {
            #expect(entry.value.isFinite)
            #expect(entry.ratios.count == entry.baselines.count)
            #expect(!entry.goal.isEmpty)
        }
        // Every entry carries exactly the keys of the issue, in its order.
        let keys = ["\"name\": ", "\"figure\": ", "\"unit\": ", "\"value\": ", "\"baselines\": {", "\"ratios\": {", "\"goal\": ", "\"met\": "]
        let lines = json.split(separator: "\n").filter { $0.hasPrefix("  {") }
        #expect(lines.count == entries.count)
        for line in lines {
            var rest = Substring(line)
            for key in keys {
                guard let range = rest.firstRange(of: key) else {
                    Issue.record("missing \(key) in \(line)")
                    break
                }
                rest = rest[range.upperBound...]
            }
            #expect(line.hasSuffix("true}") || line.hasSuffix("true},") || line.hasSuffix("false}") || line.hasSuffix("false},"))
        }
    }

    @Test("usage errors exit 64; --help prints the usage on standard output")
    func usage() async {
        let bad = await JournalBenchCommand.main(["--rounds", "zero"])
        #expect(bad.status == 64)
        #expect(bad.errors.contains("usage: journal-bench"))
        let unknown = await JournalBenchCommand.main(["--only", "nothing"])
        #expect(unknown.status == 64)
        let flag = await JournalBenchCommand.main(["--frobnicate"])
        #expect(flag.status == 64)
        let help = await JournalBenchCommand.main(["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("--quick") && help.errors.isEmpty)
    }
}

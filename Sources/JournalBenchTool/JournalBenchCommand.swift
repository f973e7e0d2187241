import SyncJournalPlatform
import SyncJournalCommandLine

/// `journal-bench`: each workload with its baselines (the raw
/// disk, SQLite in WAL mode with an outbox table), run interleaved in
/// one process, several rounds; prints the median and spread of each figure,
/// its ratio to each baseline, the goal and whether it is met.
///
/// ```swift
/// let result = await JournalBenchCommand.main(["--quick", "--json"])
/// print(result.output)
/// ```
public enum JournalBenchCommand {
    /// The command line: its options and the help text.
    package static let syntax = CommandSyntax(
        tool: "journal-bench", synopses: ["[--quick] [--json] [--rounds N] [--dir DIR] [--only NAME[,NAME...]]"],
        options: [
            .flag("--quick", help: "2 rounds with small sizes (well under a minute); for CI"),
            .flag("--json", help: "print one JSON object instead of the table"),
            .value("--rounds", "N", help: "rounds per workload (default 5; --quick: 2)"),
            .value("--dir", "DIR", help: """
                where the files go (default: a temporary directory
                under the current directory, removed afterwards)
                """),
            .value("--only", "NAMES", help: """
                run only these workloads: durable, group, crash,
                replay, checkpoint, push, open,
                memory, query, upkeep, backlog
                """),
        ])

    /// The help text.
    public static var usage: String { syntax.help }

    /// What one run does: sizes, rounds, output form.
    public struct Configuration: Sendable, Hashable {
        /// Rounds per workload.
        public var rounds = 5
        /// Edits in the one-at-a-time durable workload (and its baselines).
        public var durableEdits = 2_000
        /// Edits in the concurrent-editors workload.
        public var groupEdits = 20_000
        /// Concurrent editors.
        public var editors = 64
        /// Edits in the process-crash durability workload (and the buffered baseline).
        public var bulkEdits = 200_000
        /// Rows of the SQLite `synchronous=NORMAL` baseline.
        public var sqliteNormalRows = 20_000
        /// Operations in the replay journal (a second journal a quarter as long shows how memory scales).
        public var replayOperations = 1_000_000
        /// Records of live state in the replay journals.
        public var replayLiveRecords = 1_000
        /// Operations in the checkpoint journal, half of them dead (a quarter-size one shows scaling).
        public var checkpointOperations = 1_000_000
        /// Operations in the journal of the store-opening workload, half of them dead.
        public var openOperations = 1_000_000
        /// Queued operations pushed to the reference server.
        public var pushOperations = 100_000
        /// Operations queued (not sent) when the heap per queued operation is measured.
        public var memoryOperations = 100_000
        /// Records of the kind the indexed-query workload selects from.
        public var queryRecords = 100_000
        /// Records each query of that workload returns.
        public var queryMatches = 100
        /// Updates made through a store with the default upkeep policy (and no checkpoint call).
        public var upkeepEdits = 1_000_000
        /// Live records those updates go to.
        public var upkeepLiveRecords = 10_000
        /// Concurrent editors making them.
        public var upkeepEditors = 16
        /// Operations queued before the backlog workload times its edits.
        public var backlogOperations = 100_000
        /// Edits timed in the backlog workload (and with nothing queued).
        public var backlogEdits = 2_000
        /// Print JSON instead of the table.
        public var json = false
        /// Where the files go; nil for a temporary directory, removed afterwards.
        public var directory: String?
        /// Workloads to run (all when empty).
        public var only: Set<String> = []

        /// The full run (the README's table).
        public init() {}

        /// `--quick`: one round, sizes small enough for a run well under a minute.
        public static var quick: Configuration {
            var configuration = Configuration()
            configuration.rounds = 2
            configuration.durableEdits = 200
            configuration.groupEdits = 2_000
            configuration.bulkEdits = 20_000
            configuration.sqliteNormalRows = 1_000
            configuration.replayOperations = 40_000
            configuration.replayLiveRecords = 500
            configuration.checkpointOperations = 40_000
            configuration.openOperations = 40_000
            configuration.pushOperations = 5_000
            configuration.memoryOperations = 5_000
            configuration.queryRecords = 10_000
            configuration.upkeepEdits = 100_000
            configuration.backlogOperations = 20_000
            configuration.backlogEdits = 500
            return configuration
        }
    }

    /// The workload names, in the order they run.
    public static let workloadNames = ["durable", "group", "crash", "replay", "checkpoint", "push", "open", "memory", "query", "upkeep", "backlog"]

    /// A bad command line.
    public struct UsageError: Error, Sendable, CustomStringConvertible {
        /// What is wrong.
        public var description: String
    }

    /// Parses the command line (without the program name).
    ///
    /// - Throws: ``UsageError`` naming the mistake; an empty description for `--help`.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Configuration {
        do throws(CommandLineError) { return try parseCommandLine(arguments) } catch {
            throw UsageError(description: error == .helpRequested ? "" : error.description)
        }
    }

    /// Parses the command line (without the program name).
    ///
    /// - Throws: ``CommandLineError`` for `--help` or a usage mistake.
    package static func parseCommandLine(_ arguments: [String]) throws(CommandLineError) -> Configuration {
        let parsed = try syntax.parse(arguments)
        var configuration = parsed.has("--quick") ? Configuration.quick : Configuration()
        configuration.json = parsed.has("--json")
        if let rounds = try parsed.integer("--rounds", in: 1...100) { configuration.rounds = rounds }
        configuration.directory = parsed.value("--dir")
        if let names = parsed.list("--only") {
            for name in names where !workloadNames.contains(name) {
                throw .invalidValue(option: "--only", value: name, expected: "workloads among \(workloadNames.joined(separator: ", "))")
            }
            configuration.only = Set(names)
        }
        return configuration
    }

    /// What a run printed and its exit status.
    public struct Result: Sendable {
        /// Standard output: the table or the JSON object.
        public var output: String
        /// Standard error: progress and problems.
        public var errors: String
        /// 0 when the benchmark ran (whatever the goals), 64 for a usage error, 1 when it failed.
        public var status: Int32
        /// The entries measured.
        public var entries: [Entry]
    }

    /// Runs the tool: parses `arguments`, measures, and formats the report.
    /// Progress lines go to `progress` as the rounds finish.
    public static func main(_ arguments: [String], progress: @Sendable (String) -> Void = { _ in }) async -> Result {
        let configuration: Configuration
        do throws(CommandLineError) { configuration = try parseCommandLine(arguments) } catch {
            let rejection = syntax.rejection(error)
            return Result(output: rejection.standardOutput, errors: rejection.standardError, status: rejection.status, entries: [])
        }
        do {
            let entries = try await run(configuration, progress: progress)
            let output = configuration.json ? Report.json(entries) : Report.table(entries, configuration: configuration)
            return Result(output: output, errors: "", status: 0, entries: entries)
        } catch {
            return Result(output: "", errors: "journal-bench: \(error.description)\n", status: 1, entries: [])
        }
    }

    /// Runs every selected workload with its baselines, round after round, in a
    /// scratch directory, and returns the entries of the report.
    public static func run(_ configuration: Configuration, progress: @Sendable (String) -> Void = { _ in }) async throws(BenchError) -> [Entry] {
        let directory: String
        let temporary = configuration.directory == nil
        if let chosen = configuration.directory {
            directory = chosen
            do throws(Errno) { try SystemPath.makeDirectory(chosen, mode: 0o700) } catch where error == .fileExists {} catch {
                throw BenchError("cannot create \(chosen): \(error.message) (\(error))")
            }
        } else {
            do throws(Errno) { directory = try SystemPath.makeTemporaryDirectory(template: "./.journal-bench-XXXXXX") } catch {
                throw BenchError("cannot create a temporary directory here: \(error.message) (\(error))")
            }
        }
        defer {
            for name in ["replay-full", "replay-quarter", "checkpoint-full", "checkpoint-quarter", "open-journal", "open-checkpointed", "query"] { Files.remove(directory + "/\(name).journal") }
            // The scratch directory is the benchmark's own: whatever a
            // workload left in it (a lock file, a torn tail) goes with it.
            if temporary {
                for name in (try? SystemPath.entries(of: directory)) ?? [] { try? SystemPath.unlink(directory + "/" + name) }
                try? SystemPath.removeDirectory(directory)
            }
        }
        var samples = Samples()
        let selected = configuration.only.isEmpty ? Set(workloadNames) : configuration.only
        let rounds = configuration.rounds
        let c = configuration

        func note(_ name: String, _ round: Int, _ summary: String) { progress("\(name) round \(round + 1)/\(rounds): \(summary)\n") }

        if selected.contains("durable") {
            for round in 0..<rounds {
                samples.add(try await Workloads.durableEdits(directory: directory, count: c.durableEdits))
                samples.add(try Workloads.rawSynced(directory: directory, count: c.durableEdits, perSync: 1, preallocated: true, prefix: "raw1-pre"))
                samples.add(try Workloads.rawSynced(directory: directory, count: c.durableEdits, perSync: 1, preallocated: false, prefix: "raw1-grow"))
                samples.add(try await Workloads.rawSyncedOnQueue(directory: directory, count: c.durableEdits))
                samples.add(try Workloads.sqlite(directory: directory, count: c.durableEdits, perTransaction: 1, synchronous: .full, prefix: "sqlite-full1"))
                note("durable", round, samples.last(["durable.edits", "raw1-pre.rate", "sqlite-full1.rate"]))
            }
        }
        if selected.contains("group") {
            for round in 0..<rounds {
                samples.add(try await Workloads.groupCommit(directory: directory, count: c.groupEdits, editors: c.editors))
                samples.add(try Workloads.rawSynced(directory: directory, count: c.groupEdits, perSync: 64, preallocated: true, prefix: "raw64-pre"))
                samples.add(try Workloads.rawSynced(directory: directory, count: c.groupEdits, perSync: 64, preallocated: false, prefix: "raw64-grow"))
                samples.add(try Workloads.sqlite(directory: directory, count: c.groupEdits, perTransaction: 64, synchronous: .full, prefix: "sqlite-full64"))
                note("group", round, samples.last(["group.edits", "group.syncs", "raw64-pre.rate", "sqlite-full64.rate"]))
            }
        }
        if selected.contains("crash") {
            for round in 0..<rounds {
                samples.add(try await Workloads.bulkEdits(directory: directory, count: c.bulkEdits))
                samples.add(try Workloads.rawBuffered(directory: directory, count: c.bulkEdits))
                samples.add(try Workloads.sqlite(directory: directory, count: c.sqliteNormalRows, perTransaction: 1, synchronous: .normal, prefix: "sqlite-normal1"))
                note("crash", round, samples.last(["bulk.edits", "raw-buffered.rate", "sqlite-normal1.rate"]))
            }
        }
        if selected.contains("replay") {
            let full = directory + "/replay-full.journal", quarter = directory + "/replay-quarter.journal"
            progress("replay: writing journals of \(c.replayOperations) and \(c.replayOperations / 4) operations\n")
            try await Workloads.replayJournal(path: full, operations: c.replayOperations, liveRecords: c.replayLiveRecords)
            try await Workloads.replayJournal(path: quarter, operations: c.replayOperations / 4, liveRecords: c.replayLiveRecords)
            for round in 0..<rounds {
                let measured = try await Workloads.replay(path: full, prefix: "replay", measureMemory: false)
                samples.add(measured)
                samples.add(try await Workloads.replay(path: quarter, prefix: "replay-quarter", measureMemory: false))
                if round == 0 {
                    samples.add(try await Workloads.replay(path: full, prefix: "replay", measureMemory: true))
                    samples.add(try await Workloads.replay(path: quarter, prefix: "replay-quarter", measureMemory: true))
                }
                samples.add(try Workloads.pageCachedRead(path: full, records: measured["replay.count"] ?? 0))
                note("replay", round, samples.last(["replay.records", "replay.mbps", "replay.memory", "replay-quarter.memory", "read.mbps"]))
            }
            Files.remove(full)
            Files.remove(quarter)
        }
        if selected.contains("checkpoint") {
            let full = directory + "/checkpoint-full.journal", quarter = directory + "/checkpoint-quarter.journal"
            progress("checkpoint: writing journals of \(c.checkpointOperations) and \(c.checkpointOperations / 4) operations\n")
            try await Workloads.checkpointJournal(path: full, operations: c.checkpointOperations)
            try await Workloads.checkpointJournal(path: quarter, operations: c.checkpointOperations / 4)
            for round in 0..<rounds {
                let measured = try await Workloads.checkpoint(directory: directory, source: full, prefix: "checkpoint")
                samples.add(measured)
                samples.add(try await Workloads.checkpoint(directory: directory, source: quarter, prefix: "checkpoint-quarter"))
                samples.add(try Workloads.sequentialWrite(directory: directory, bytes: Int(measured["checkpoint.after"] ?? 0)))
                note("checkpoint", round, samples.last(["checkpoint.seconds", "checkpoint.mbps", "checkpoint-quarter.seconds", "sequential.mbps"]))
            }
            Files.remove(full)
            Files.remove(quarter)
        }
        if selected.contains("memory") {
            for round in 0..<rounds {
                samples.add(try await Workloads.memoryPerQueued(directory: directory, count: c.memoryOperations, editors: c.editors))
                note("memory", round, samples.last(["memory.perOperation"]))
            }
        }
        if selected.contains("push") {
            for round in 0..<rounds {
                samples.add(try await Workloads.push(directory: directory, count: c.pushOperations))
                note("push", round, samples.last(["push.ops", "push-device.ops", "push.cpu", "push-device.cpu", "push-device.growth"]))
            }
        }
        if selected.contains("open") {
            let journal = directory + "/open-journal.journal", checkpointed = directory + "/open-checkpointed.journal"
            progress("open: writing a journal of \(c.openOperations) operations and its checkpoint\n")
            try await Workloads.checkpointJournal(path: journal, operations: c.openOperations)
            try await Workloads.checkpointedCopy(of: journal, to: checkpointed)
            for round in 0..<rounds {
                samples.add(try await Workloads.open(path: journal, prefix: "open"))
                samples.add(try await Workloads.open(path: checkpointed, prefix: "open-checkpointed"))
                samples.add(try Workloads.pageCachedOpenRead(path: journal, prefix: "open-read"))
                samples.add(try Workloads.pageCachedOpenRead(path: checkpointed, prefix: "open-checkpointed-read"))
                note("open", round, samples.last(["open.seconds", "open-read.seconds", "open-checkpointed.seconds", "open.heap", "open-checkpointed.heap"]))
            }
            Files.remove(journal)
            Files.remove(checkpointed)
        }
        if selected.contains("query") {
            let journal = directory + "/query.journal"
            progress("query: writing a journal of \(c.queryRecords) records\n")
            try await Workloads.queryJournal(path: journal, records: c.queryRecords, matching: c.queryMatches)
            for round in 0..<rounds {
                samples.add(try await Workloads.indexedQuery(path: journal, matching: c.queryMatches))
                note("query", round, samples.last(["query.indexed", "query.scan", "query.open-indexed", "query.open-plain"]))
            }
            Files.remove(journal)
        }
        if selected.contains("upkeep") {
            // One long run per round: the full size is a million durable edits.
            for round in 0..<(c.upkeepEdits >= 1_000_000 ? 1 : rounds) {
                samples.add(try await Workloads.upkeep(directory: directory, edits: c.upkeepEdits, liveRecords: c.upkeepLiveRecords,
                                                       editors: c.upkeepEditors))
                note("upkeep", round, samples.last(["upkeep.size", "upkeep.largest", "upkeep.open", "upkeep.fresh-open",
                                                    "upkeep.p99-during", "upkeep.p99-without", "upkeep.checkpoints"]))
            }
        }
        if selected.contains("backlog") {
            // The two in turn each round, so both see the same machine.
            for round in 0..<rounds {
                samples.add(try await Workloads.backlog(directory: directory, queued: 0, edits: c.backlogEdits, prefix: "backlog-none"))
                samples.add(try await Workloads.backlog(directory: directory, queued: c.backlogOperations, edits: c.backlogEdits,
                                                        prefix: "backlog"))
                note("backlog", round, samples.last(["backlog.p50", "backlog-none.p50", "backlog.p99", "backlog-none.p99"]))
            }
        }
        return Report.entries(samples, configuration: configuration, selected: selected)
    }
}

extension JournalBenchCommand {
    /// The JSON report for `entries` (what `--json` prints).
    public static func json(_ entries: [Entry]) -> String { Report.json(entries) }

    /// The table for `entries` (what a run without `--json` prints).
    public static func table(_ entries: [Entry], configuration: Configuration) -> String { Report.table(entries, configuration: configuration) }
}

/// Every sample of every figure, by name.
struct Samples {
    private(set) var values: [String: [Double]] = [:]

    mutating func add(_ figures: [String: Double]) {
        for (name, value) in figures { values[name, default: []].append(value) }
    }

    func median(_ name: String) -> Double? { values[name].map(Statistics.median) }
    func spread(_ name: String) -> (Double, Double)? {
        guard let list = values[name], let low = list.min(), let high = list.max() else { return nil }
        return (low, high)
    }

    /// The latest sample of each name, for progress lines.
    func last(_ names: [String]) -> String {
        names.compactMap { name in values[name]?.last.map { "\(name) \(Report.format($0))" } }.joined(separator: ", ")
    }
}

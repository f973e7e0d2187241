import SyncJournalCommandLine

/// One line of the report: a figure of a workload, its baselines and goal.
public struct Entry: Sendable, Hashable {
    /// The workload (stable: `durable-edit`, `group-commit`, `crash-durable`, `replay`, `checkpoint`, `push`, `open`, `memory`, `indexed-query`, `upkeep`, `backlog`).
    public var name: String
    /// What is measured (`edits/s`, `p99 latency`, …).
    public var figure: String
    /// The unit of ``value`` and the baselines.
    public var unit: String
    /// The median over the rounds.
    public var value: Double
    /// The smallest and largest sample.
    public var spread: ClosedRange<Double>
    /// Each baseline's median (same unit), by name, in the order given.
    public var baselines: [(name: String, value: Double, spread: ClosedRange<Double>)]
    /// The goal, in words.
    public var goal: String
    /// Whether the goal holds for the medians (always true for a figure without a goal).
    public var met: Bool
    /// Whether the entry has a goal at all (false: a figure reported only).
    public var hasGoal: Bool

    /// `value` divided by each baseline.
    public var ratios: [(name: String, ratio: Double)] {
        baselines.map { ($0.name, $0.value == 0 ? 0 : value / $0.value) }
    }

    public static func == (lhs: Entry, rhs: Entry) -> Bool {
        lhs.name == rhs.name && lhs.figure == rhs.figure && lhs.value == rhs.value && lhs.goal == rhs.goal
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(figure)
    }
}

/// Turns the samples into entries, and entries into the table or JSON.
enum Report {
    static func entries(_ samples: Samples, configuration c: JournalBenchCommand.Configuration, selected: Set<String>) -> [Entry] {
        var entries: [Entry] = []
        func add(_ name: String, _ figure: String, _ unit: String, _ key: String, _ baselines: [(String, String)],
                 goal: String?, check: (Double, [Double]) -> Bool = { _, _ in true }) {
            guard let value = samples.median(key), let spread = samples.spread(key) else { return }
            let found = baselines.compactMap { name, key -> (name: String, value: Double, spread: ClosedRange<Double>)? in
                guard let median = samples.median(key), let range = samples.spread(key) else { return nil }
                return (name, median, range.0...range.1)
            }
            let met = goal == nil ? true : check(value, found.map(\.value))
            entries.append(Entry(name: name, figure: figure, unit: unit, value: value, spread: spread.0...spread.1,
                                 baselines: found, goal: goal ?? "— (figure only)", met: met, hasGoal: goal != nil))
        }
        func ratio(_ value: Double, _ baseline: Double) -> Double { baseline == 0 ? 0 : value / baseline }

        if selected.contains("durable") {
            let bases = [("sqlite-wal-full-1-row-per-txn", "sqlite-full1"), ("raw-fdatasync-preallocated", "raw1-pre"), ("raw-fdatasync-growing", "raw1-grow"),
                         ("raw-fdatasync-preallocated-on-a-serial-queue", "raw1-queue")]
            add("durable-edit", "edits/s", "edits/s", "durable.edits", bases.map { ($0.0, $0.1 + ".rate") },
                goal: "≥ 1.3× sqlite-wal-full-1-row-per-txn; ≥ 0.9× raw-fdatasync-preallocated") { v, b in
                b.count == 4 && ratio(v, b[0]) >= 1.3 && ratio(v, b[1]) >= 0.9
            }
            add("durable-edit", "p50 latency", "µs", "durable.p50", bases.map { ($0.0, $0.1 + ".p50") }, goal: nil)
            add("durable-edit", "p99 latency", "µs", "durable.p99", bases.map { ($0.0, $0.1 + ".p99") }, goal: nil)
            add("durable-edit", "p50 of a round trip to the store's thread with no write", "µs", "durable.trip-p50", [], goal: nil)
        }
        if selected.contains("group") {
            add("group-commit", "edits/s (\(c.editors) editors)", "edits/s", "group.edits",
                [("sqlite-wal-full-64-rows-per-txn", "sqlite-full64.rate"), ("raw-64-per-fdatasync-preallocated", "raw64-pre.rate"),
                 ("raw-64-per-fdatasync-growing", "raw64-grow.rate")],
                goal: "≥ 1.3× sqlite-wal-full-64-rows-per-txn; ≥ 0.8× raw-64-per-fdatasync-preallocated") { v, b in
                b.count == 3 && ratio(v, b[0]) >= 1.3 && ratio(v, b[1]) >= 0.8
            }
            add("group-commit", "syncs issued (\(c.groupEdits) edits)", "fdatasync", "group.syncs",
                [("raw-64-per-fdatasync-preallocated", "raw64-pre.syncs")], goal: nil)
        }
        if selected.contains("crash") {
            add("crash-durable", "edits/s (bulk, synced every 10 ms)", "edits/s", "bulk.edits",
                [("sqlite-wal-normal-1-row-per-txn", "sqlite-normal1.rate"), ("raw-buffered-write", "raw-buffered.rate")],
                goal: "≥ 10× sqlite-wal-normal-1-row-per-txn; ≥ 0.5× raw-buffered-write") { v, b in
                b.count == 2 && ratio(v, b[0]) >= 10 && ratio(v, b[1]) >= 0.5
            }
            add("crash-durable", "MB/s", "MB/s", "bulk.mbps", [("raw-buffered-write", "raw-buffered.mbps")], goal: nil)
        }
        if selected.contains("replay") {
            add("replay", "records/s (\(c.replayOperations) ops, decoded and folded)", "records/s", "replay.records",
                [("page-cached-read", "read.records")], goal: "≥ 1.5 M records/s") { v, _ in v >= 1_500_000 }
            add("replay", "MB/s", "MB/s", "replay.mbps", [("page-cached-read", "read.mbps")], goal: nil)
            add("replay", "peak heap above start (\(c.replayLiveRecords) live records)", "MiB", "replay.memory",
                [("journal-a-quarter-as-long", "replay-quarter.memory")],
                goal: "independent of journal size: ≤ journal-a-quarter-as-long + 16 MiB") { v, b in
                b.count == 1 && v <= b[0] + 16
            }
        }
        if selected.contains("checkpoint") {
            add("checkpoint", "MB/s written (\(c.checkpointOperations) ops, half dead)", "MB/s", "checkpoint.mbps",
                [("sequential-write-fsync", "sequential.mbps")], goal: "≥ 200 MB/s") { v, _ in v >= 200 }
            add("checkpoint", "seconds", "s", "checkpoint.seconds", [("journal-a-quarter-as-long", "checkpoint-quarter.seconds")], goal: nil)
            add("checkpoint", "bytes before", "bytes", "checkpoint.before", [("journal-a-quarter-as-long", "checkpoint-quarter.before")], goal: nil)
            add("checkpoint", "bytes after", "bytes", "checkpoint.after", [("journal-a-quarter-as-long", "checkpoint-quarter.after")], goal: nil)
            if let seconds = samples.median("checkpoint.seconds"), let quarterSeconds = samples.median("checkpoint-quarter.seconds"),
               let after = samples.median("checkpoint.after"), let quarterAfter = samples.median("checkpoint-quarter.after"),
               quarterSeconds > 0, quarterAfter > 0, after > 0 {
                let scaling = (seconds / quarterSeconds) / (after / quarterAfter)
                entries.append(Entry(name: "checkpoint", figure: "time ratio ÷ live-bytes ratio (full vs a quarter)", unit: "×",
                                     value: scaling, spread: scaling...scaling, baselines: [],
                                     goal: "linear in live data: ≤ 1.3", met: scaling <= 1.3, hasGoal: true))
            }
        }
        if selected.contains("memory") {
            add("memory", "heap per queued operation (\(c.memoryOperations) queued creates)", "bytes/op", "memory.perOperation", [],
                goal: "≤ 600 bytes/op") { v, _ in v <= 600 }
            add("memory", "heap per queued operation, the same queue reopened (one copy of the state)", "bytes/op",
                "memory.perOperationReopened", [], goal: nil)
        }
        if selected.contains("push") {
            add("push", "operations/s (\(c.pushOperations) queued, reference server)", "ops/s", "push.ops",
                [("device-only-server-keeps-nothing", "push-device.ops")], goal: "≥ 100 k operations/s") { v, _ in v >= 100_000 }
            add("push", "peak heap in use (device and server), sampled every 10 %", "MiB", "push.peak", [("device-only-server-keeps-nothing", "push-device.peak")], goal: nil)
            // CPU time, unlike the rate, hardly changes when other processes share the cores.
            add("push", "CPU time per operation (device and server, all threads)", "µs", "push.cpu",
                [("device-only-server-keeps-nothing", "push-device.cpu")], goal: nil)
            add("push", "device heap growth, 10 % → 100 % sent", "MiB", "push-device.growth", [],
                goal: "flat: ≤ 8 MiB") { v, _ in v <= 8 }
        }
        if selected.contains("upkeep") {
            let what = "\(c.upkeepEdits) updates of \(c.upkeepLiveRecords) records, default upkeep"
            add("upkeep", "journal bytes ÷ live bytes at the end (\(what))", "×", "upkeep.size", [],
                goal: "≤ 3×") { v, _ in v <= 3 }
            add("upkeep", "largest journal seen while editing ÷ live bytes", "×", "upkeep.largest", [], goal: "≤ 3×") { v, _ in v <= 3 }
            add("upkeep", "seconds to open the journal left", "s", "upkeep.open",
                [("a-fresh-checkpoint-of-the-same-state", "upkeep.fresh-open")], goal: "≤ 1.5× a-fresh-checkpoint-of-the-same-state") { v, b in
                b.count == 1 && ratio(v, b[0]) <= 1.5
            }
            add("upkeep", "seconds to open the journal at its largest, one update short of the next automatic checkpoint", "s", "upkeep.largest-open",
                [("a-fresh-checkpoint-of-the-same-state", "upkeep.largest-fresh-open")], goal: "≤ 1.5× a-fresh-checkpoint-of-the-same-state") { v, b in
                b.count == 1 && ratio(v, b[0]) <= 1.5
            }
            add("upkeep", "records after the checkpoint in that journal", "count", "upkeep.largest-records", [], goal: nil)
            add("upkeep", "p99 edit latency while an automatic checkpoint is written", "µs", "upkeep.p99-during",
                [("no-checkpoint-running", "upkeep.p99-without")], goal: "≤ 2× no-checkpoint-running") { v, b in
                b.count == 1 && ratio(v, b[0]) <= 2
            }
            add("upkeep", "automatic checkpoints", "count", "upkeep.checkpoints", [], goal: nil)
            add("upkeep", "edits begun while one was written", "count", "upkeep.edits-during", [], goal: nil)
            add("upkeep", "live bytes (a fresh checkpoint's size)", "bytes", "upkeep.live", [], goal: nil)
        }
        if selected.contains("backlog") {
            let what = "\(c.backlogOperations) operations queued, status followed"
            for (quantile, key) in [("p50", "p50"), ("p99", "p99")] {
                add("backlog", "\(quantile) edit latency, \(what)", "µs", "backlog.\(key)",
                    [("nothing-queued", "backlog-none.\(key)")], goal: "≤ 1.2× nothing-queued") { v, b in
                    b.count == 1 && ratio(v, b[0]) <= 1.2
                }
            }
        }
        if selected.contains("open") {
            add("open", "seconds to open (\(c.openOperations) ops, half dead, no checkpoint)", "s", "open.seconds",
                [("page-cached-read", "open-read.seconds")], goal: nil)
            add("open", "seconds to open (the same state as a checkpoint)", "s", "open-checkpointed.seconds",
                [("page-cached-read", "open-checkpointed-read.seconds")], goal: nil)
            add("open", "heap after opening, no checkpoint", "MiB", "open.heap",
                [("the-same-state-checkpointed", "open-checkpointed.heap")], goal: nil)
            add("open", "journal bytes, no checkpoint", "bytes", "open.bytes",
                [("the-same-state-checkpointed", "open-checkpointed.bytes")], goal: nil)
        }
        if selected.contains("query") {
            add("indexed-query", "queries/s (\(c.queryMatches) of \(c.queryRecords) records by an indexed field)", "queries/s", "query.indexed",
                [("full-scan", "query.scan")], goal: "≥ 50× faster than full-scan") { v, b in
                b.count == 1 && ratio(v, b[0]) >= 50
            }
            add("indexed-query", "seconds to open with the index (built from the state)", "s", "query.open-indexed",
                [("the-same-store-without-indexes", "query.open-plain")], goal: nil)
        }
        return entries
    }

    /// A number for people: thousands separators above 100, else three significant digits.
    static func format(_ value: Double) -> String {
        if !value.isFinite { return "\(value)" }
        if abs(value) >= 100 {
            let digits = String(Int64(value.rounded()).magnitude)
            var grouped = ""
            for (index, character) in digits.enumerated() {
                if index > 0 && (digits.count - index) % 3 == 0 { grouped += "," }
                grouped.append(character)
            }
            return (value < 0 ? "-" : "") + grouped
        }
        if value == 0 { return "0" }
        let decimals = abs(value) >= 10 ? 1 : abs(value) >= 1 ? 2 : 3
        return fixed(value, decimals)
    }

    static func fixed(_ value: Double, _ decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int64((abs(value) * scale).rounded())
        let whole = scaled / Int64(scale)
        var fraction = String(scaled % Int64(scale))
        while fraction.count < decimals { fraction = "0" + fraction }
        return (value < 0 ? "-" : "") + "\(whole)" + (decimals > 0 ? "." + fraction : "")
    }

    /// A ratio with two decimals, more when it is small.
    static func ratioText(_ ratio: Double) -> String {
        ratio >= 0.1 || ratio == 0 ? fixed(ratio, 2) : ratio >= 0.001 ? fixed(ratio, 4) : fixed(ratio, 6)
    }

    static func spread(_ range: ClosedRange<Double>) -> String {
        range.lowerBound == range.upperBound ? "" : " (\(format(range.lowerBound))–\(format(range.upperBound)))"
    }

    /// The table: one row per figure, markdown so the README can quote it.
    static func table(_ entries: [Entry], configuration: JournalBenchCommand.Configuration) -> String {
        var lines = ["journal-bench: \(configuration.rounds) round\(configuration.rounds == 1 ? "" : "s"), median (min–max); ratio = value ÷ baseline",
                     "",
                     "| workload | figure | value | baselines: median (min–max) → ratio | goal | met |",
                     "|---|---|---|---|---|---|"]
        for entry in entries {
            let baselines = zip(entry.baselines, entry.ratios).map { baseline, ratio in
                "\(baseline.name): \(format(baseline.value))\(spread(baseline.spread)) → \(ratioText(ratio.ratio))×"
            }.joined(separator: "; ")
            let met = entry.hasGoal ? (entry.met ? "yes" : "**no**") : "—"
            lines.append("| \(entry.name) | \(entry.figure) | \(format(entry.value)) \(entry.unit)\(spread(entry.spread)) | \(baselines.isEmpty ? "—" : baselines) | \(entry.goal) | \(met) |")
        }
        let goals = entries.filter(\.hasGoal)
        lines.append("")
        lines.append("goals met: \(goals.filter(\.met).count) of \(goals.count)")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The JSON report: `{"workloads": [{"name", "figure", "unit",
    /// "value", "baselines": {NAME: value}, "ratios": {NAME: ratio}, "goal", "met"}]}`.
    static func json(_ entries: [Entry]) -> String {
        // the shared JSON string escaping, so the tools write one JSON dialect.
        func string(_ text: String) -> String { JSONText.string(text).serialized }
        func number(_ value: Double) -> String {
            guard value.isFinite else { return "null" }
            if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
            return "\(value)"
        }
        let items = entries.map { entry in
            let baselines = entry.baselines.map { "\(string($0.name)): \(number($0.value))" }.joined(separator: ", ")
            let ratios = entry.ratios.map { "\(string($0.name)): \(number($0.ratio))" }.joined(separator: ", ")
            return "{\"name\": \(string(entry.name)), \"figure\": \(string(entry.figure)), \"unit\": \(string(entry.unit)), "
                + "\"value\": \(number(entry.value)), \"baselines\": {\(baselines)}, \"ratios\": {\(ratios)}, "
                + "\"goal\": \(string(entry.goal)), \"met\": \(entry.met)}"
        }
        return "{\"workloads\": [\n  " + items.joined(separator: ",\n  ") + "\n]}\n"
    }
}

import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalCommandLine
import SyncJournalSync

/// The logic of the `sync-sim` tool, testable in-process: it returns what to
/// print and the exit status instead of printing.
///
/// ```
/// sync-sim run FILE...                                        # scenario files; exit 1 if any expectation fails
/// sync-sim --seed S --devices D --steps N [--faults LIST]    # one random run; exit 1 on a violation
/// ```
///
/// ```swift
/// let result = await SyncSimCommand.main(["--seed", "7", "--devices", "3", "--steps", "200"])
/// print(result.output, terminator: "")
/// ```
public enum SyncSimCommand {
    /// What the tool prints and how it exits.
    public struct Result: Sendable, Hashable {
        /// Standard output.
        public var output: String
        /// Standard error.
        public var errors: String
        /// 0: all held; 1: a failed expectation, a parse error or a violation; 64: bad usage;
        /// 69: `--server` cannot be reached or refuses the token.
        public var status: Int32
    }

    /// The command line: scenario files, or a seeded random run or sweep.
    package static let syntax = CommandSyntax(
        tool: "sync-sim",
        synopses: ["run FILE...",
                   "--seed S --devices D [--users U] --steps N [--faults LIST] [--no-shrink]",
                   "--seeds A-B --devices D [--users U] --steps N [--faults LIST]   (a sweep, then the totals)"],
        summary: """
            LIST: comma-separated fault classes, default (all but server-restore
                  and attachments), all, or none; default,attachments adds one:
                  \(SimulationFault.allCases.map(\.rawValue).joined(separator: ","))
            """,
        options: [
            .value("--seed", "S", help: "the seed of one random run"),
            .value("--seeds", "A-B", help: "one run per seed from A to B, stopping at the first violation"),
            .value("--devices", "D", help: "devices, 1 to 26 (default 3)"),
            .value("--users", "U", help: """
                users, 1 to 8 (default 1); from 2, the devices take turns among
                them and u1 shares a list of pins with the others
                """),
            .value("--steps", "N", help: "steps before the faults stop (default 200)"),
            .value("--faults", "LIST", help: "the fault classes injected (default all but server-restore and attachments; all: every one)"),
            .flag("--no-shrink", help: "report a violation's trace as it is, unshrunk"),
            .value("--server", "URL", help: """
                the devices sync with a running sync-server over HTTP; faults are
                injected on the client side, other writers are another client; real
                time, so a run is not byte-deterministic
                """),
            .value("--token", "TOKEN", help: "the bearer token for --server (default dev-token)"),
        ],
        positionals: .some("FILE"))

    /// The help text.
    public static var usage: String { syntax.help }

    /// What a command line asks `sync-sim` to do.
    enum Invocation {
        /// Run scenario files.
        case scenarios([String])
        /// One seeded random run.
        case single(SimulationConfiguration)
        /// One run per seed in the range; the configuration's own seed is the first.
        case sweep(ClosedRange<UInt64>, SimulationConfiguration)
    }

    /// Parses the arguments (without the program name).
    static func parse(_ arguments: [String]) throws(CommandLineError) -> Invocation {
        let parsed = try syntax.parse(arguments)
        if parsed.positionals.first == "run" {
            guard parsed.given.isEmpty else { throw .invalidCombination("run takes scenario files only, no options") }
            guard parsed.positionals.count > 1 else { throw .missingArgument("FILE") }
            return .scenarios(Array(parsed.positionals.dropFirst()))
        }
        if let extra = parsed.positionals.first { throw .unexpectedArgument(extra) }
        if let seeds = try parsed.unsignedRange("--seeds") {
            if parsed.has("--seed") { throw .invalidCombination("--seed and --seeds both choose seeds; give one") }
            return .sweep(seeds, try SimulationConfiguration(parsed, seed: seeds.lowerBound))
        }
        guard let seed = try parsed.unsigned("--seed") else { throw .invalidCombination("--seed S (or --seeds A-B) is required") }
        return .single(try SimulationConfiguration(parsed, seed: seed))
    }

    /// Runs the tool with `arguments` (without the program name).
    public static func main(_ arguments: [String]) async -> Result {
        let invocation: Invocation
        do throws(CommandLineError) { invocation = try parse(arguments) } catch {
            let rejection = syntax.rejection(error)
            return Result(output: rejection.standardOutput, errors: rejection.standardError, status: rejection.status)
        }
        switch invocation {
        case .scenarios(let files):
            return await runFiles(files)
        case .sweep(let seeds, let configuration):
            return await sweep(seeds, configuration)
        case .single(let configuration):
            if let problem = await unreachable(configuration) { return problem }
            let outcome = await Simulation.runWithShrinking(configuration)
            return Result(output: outcome.report, errors: "", status: outcome.violation == nil ? 0 : 1)
        }
    }

    /// With `--server`, a one-line error (status 69) when the server cannot be
    /// reached or refuses the token; `nil` when it answers (or there is none).
    static func unreachable(_ configuration: SimulationConfiguration) async -> Result? {
        guard let url = configuration.server else { return nil }
        do throws(TransportError) {
            try await HTTPSimulationServer(baseURL: url, token: configuration.token).checkReachable()
            return nil
        } catch {
            switch error {
            case .offline, .serverUnreachable, .transient:
                return Result(output: "", errors: "sync-sim: cannot reach sync-server at \(url.absoluteString): \(error) (start it with: swift run sync-server)\n", status: 69)
            default:
                return Result(output: "", errors: "sync-sim: sync-server at \(url.absoluteString) refused the first pull: \(error)\n", status: 69)
            }
        }
    }

    /// `--seeds A-B` in place of `--seed S`: one run per seed (each printing its
    /// line), then a line with the totals; stops at the first violation.
    static func sweep(_ seeds: ClosedRange<UInt64>, _ base: SimulationConfiguration) async -> Result {
        let first = seeds.lowerBound
        let last = seeds.upperBound
        var output = ""
        var total = SimulationStatistics()
        var runs = 0
        for seed in seeds {
            var configuration = base
            configuration.seed = seed
            if seed == first, let problem = await unreachable(configuration) { return problem }
            let outcome = await Simulation.runWithShrinking(configuration)
            output += outcome.report
            runs += 1
            total.steps += outcome.statistics.steps
            total.operations += outcome.statistics.operations
            total.syncs += outcome.statistics.syncs
            total.crashes += outcome.statistics.crashes
            total.crashesMidRequest += outcome.statistics.crashesMidRequest
            total.crashesMidCheckpoint += outcome.statistics.crashesMidCheckpoint
            total.crashesMidWrite += outcome.statistics.crashesMidWrite
            total.conflicts += outcome.statistics.conflicts
            total.invariantChecks += outcome.statistics.invariantChecks
            total.membershipChanges += outcome.statistics.membershipChanges
            total.rejections += outcome.statistics.rejections
            total.attachmentsAdded += outcome.statistics.attachmentsAdded
            total.attachmentsUploaded += outcome.statistics.attachmentsUploaded
            total.attachmentsDownloaded += outcome.statistics.attachmentsDownloaded
            total.crashesMidUpload += outcome.statistics.crashesMidUpload
            if outcome.violation != nil { return Result(output: output, errors: "", status: 1) }
        }
        output += "seeds \(first)-\(last): \(runs) runs, 0 violations; steps \(total.steps), operations \(total.operations), "
            + "syncs \(total.syncs), crashes \(total.crashes) (mid-request \(total.crashesMidRequest), "
            + "mid-checkpoint \(total.crashesMidCheckpoint), mid-write \(total.crashesMidWrite)), "
            + "conflicts \(total.conflicts), "
            + (base.users > 1 ? "membership changes \(total.membershipChanges), rejected edits surfaced \(total.rejections), " : "")
            + (base.faults.contains(.attachments)
                ? "attachments added \(total.attachmentsAdded), uploaded \(total.attachmentsUploaded), downloaded \(total.attachmentsDownloaded), "
                    + "crashes mid-upload \(total.crashesMidUpload), " : "")
            + "invariant checks \(total.invariantChecks)\n"
        return Result(output: output, errors: "", status: 0)
    }

    /// Runs every scenario file; one line per file, then the failures.
    public static func runFiles(_ paths: [String]) async -> Result {
        var output = ""
        var failed = 0
        for path in paths {
            guard let text = readFile(path) else {
                output += "FAIL \(path)\n  \(path): cannot read the file\n"
                failed += 1
                continue
            }
            let scenario: Scenario
            do { scenario = try Scenario.parse(text, file: path) } catch {
                output += "FAIL \(path) (parse errors)\n" + error.problems.map { "  \($0)\n" }.joined()
                failed += 1
                continue
            }
            let report = await ScenarioRunner.run(scenario)
            if report.passed {
                output += "PASS \(path) (\(report.commandsRun) commands, \(report.expectationsChecked) expectations)\n"
            } else {
                failed += 1
                output += "FAIL \(path) (\(report.failures.count) of \(report.expectationsChecked) expectations or commands failed)\n"
                output += report.failures.map { "  \($0)\n" }.joined()
            }
        }
        output += failed == 0 ? "all \(paths.count) scenario(s) passed\n" : "\(failed) of \(paths.count) scenario(s) failed\n"
        return Result(output: output, errors: "", status: failed == 0 ? 0 : 1)
    }

    /// The whole file as UTF-8, or `nil`.
    static func readFile(_ path: String) -> String? {
        guard let bytes = try? SystemFile.readAll(path) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}

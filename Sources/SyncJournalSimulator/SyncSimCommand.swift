import SyncJournalPlatform
import SyncJournalProtocol
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
        /// 0: all held; 1: a failed expectation, a parse error or a violation; 2: bad usage;
        /// 69: `--server` cannot be reached or refuses the token.
        public var status: Int32
    }

    /// The usage text.
    public static let usage = """
        usage: sync-sim run FILE...
               sync-sim --seed S --devices D --steps N [--faults LIST] [--no-shrink]
               sync-sim --seeds A-B --devices D --steps N [--faults LIST]   (a sweep, then the totals)
          LIST: comma-separated fault classes (default: all), or none:
                \(SimulationFault.allCases.map(\.rawValue).joined(separator: ","))
          --server URL [--token TOKEN]  the devices sync with a running sync-server over HTTP
                (token default dev-token); faults are injected on the client side, other
                writers are another client; real time, so a run is not byte-deterministic

        """

    /// Runs the tool with `arguments` (without the program name).
    public static func main(_ arguments: [String]) async -> Result {
        if arguments.first == "run" {
            let files = Array(arguments.dropFirst())
            if files.isEmpty { return Result(output: "", errors: "sync-sim run: no scenario files\n" + usage, status: 2) }
            return await runFiles(files)
        }
        if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
            return Result(output: arguments.isEmpty ? "" : usage, errors: arguments.isEmpty ? usage : "", status: arguments.isEmpty ? 2 : 0)
        }
        if let at = arguments.firstIndex(of: "--seeds") {
            return await sweep(arguments, at: at)
        }
        let configuration: SimulationConfiguration
        do { configuration = try SimulationConfiguration(arguments: arguments) } catch {
            return Result(output: "", errors: "sync-sim: \(error.description)\n" + usage, status: 2)
        }
        if let problem = await unreachable(configuration) { return problem }
        let outcome = await Simulation.runWithShrinking(configuration)
        return Result(output: outcome.report, errors: "", status: outcome.violation == nil ? 0 : 1)
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
            case .offline, .transient:
                return Result(output: "", errors: "sync-sim: cannot reach sync-server at \(url.absoluteString): \(error) (start it with: swift run sync-server)\n", status: 69)
            default:
                return Result(output: "", errors: "sync-sim: sync-server at \(url.absoluteString) refused the first pull: \(error)\n", status: 69)
            }
        }
    }

    /// `--seeds A-B` in place of `--seed S`: one run per seed (each printing its
    /// line), then a line with the totals; stops at the first violation.
    static func sweep(_ arguments: [String], at index: Int) async -> Result {
        guard index + 1 < arguments.count else { return Result(output: "", errors: "sync-sim: --seeds needs a range A-B\n" + usage, status: 2) }
        let bounds = arguments[index + 1].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = UInt64(bounds[0]), let last = UInt64(bounds[1]), first <= last else {
            return Result(output: "", errors: "sync-sim: --seeds must be a range A-B with A <= B, saw \(arguments[index + 1])\n" + usage, status: 2)
        }
        var rest = arguments
        rest.removeSubrange(index...(index + 1))
        var output = ""
        var total = SimulationStatistics()
        var runs = 0
        for seed in first...last {
            let configuration: SimulationConfiguration
            do { configuration = try SimulationConfiguration(arguments: ["--seed", String(seed)] + rest) } catch {
                return Result(output: output, errors: "sync-sim: \(error.description)\n" + usage, status: 2)
            }
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
            if outcome.violation != nil { return Result(output: output, errors: "", status: 1) }
        }
        output += "seeds \(first)-\(last): \(runs) runs, 0 violations; steps \(total.steps), operations \(total.operations), "
            + "syncs \(total.syncs), crashes \(total.crashes) (mid-request \(total.crashesMidRequest), "
            + "mid-checkpoint \(total.crashesMidCheckpoint), mid-write \(total.crashesMidWrite)), "
            + "conflicts \(total.conflicts), invariant checks \(total.invariantChecks)\n"
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

import SyncJournalCommandLine

/// The logic of the `sync-load` tool, testable in-process: it returns what to
/// print and the exit status instead of printing.
///
/// ```swift
/// let result = await SyncLoadCommand.main(["--server", "http://127.0.0.1:8787", "--seconds", "1"])
/// print(result.output, terminator: "")
/// ```
public enum SyncLoadCommand {
    /// What the tool prints and how it exits.
    public struct Result: Sendable, Hashable {
        /// Standard output.
        public var output: String
        /// Standard error.
        public var errors: String
        /// 0: no request failed; 1: some failed; 64: bad usage; 69: the server cannot be reached or refuses the token.
        public var status: Int32
    }

    /// Runs the tool with `arguments` (without the program name).
    public static func main(_ arguments: [String]) async -> Result {
        let configuration: LoadConfiguration
        do throws(CommandLineError) { configuration = try LoadConfiguration.parse(arguments) } catch {
            let rejection = LoadConfiguration.syntax.rejection(error)
            return Result(output: rejection.standardOutput, errors: rejection.standardError, status: rejection.status)
        }
        if configuration.liveLatencyEdits != nil {
            do {
                let report = try await LiveLatencyRun.run(configuration)
                return Result(output: report.text, errors: "", status: 0)
            } catch {
                return Result(output: "", errors: "sync-load: \(error.description)\n", status: 69)
            }
        }
        do {
            let report = try await LoadRunner.run(configuration)
            return Result(output: report.text, errors: "", status: report.tally.errors == 0 ? 0 : 1)
        } catch {
            return Result(output: "", errors: "sync-load: \(error.description)\n", status: 69)
        }
    }
}

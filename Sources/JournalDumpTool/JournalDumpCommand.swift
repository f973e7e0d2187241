import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalCommandLine

/// `journal-dump [--json] [--verify] [--state] PATH`: shows any journal,
/// healthy or damaged, without changing it. `--state` adds the state a store
/// rebuilds by replaying it (``Replayer``).
///
/// Exit status: 0 clean, 1 damage found (or, with `--state`, a state that
/// cannot be rebuilt), 3 unsupported (intact, but holding something only a
/// newer version understands), 64 usage error, 65 not a journal (bad magic or
/// unknown major version), 66 the file cannot be opened.
package struct JournalDumpCommand: Sendable {
    /// Parsed command-line options.
    package struct Options: Sendable, Hashable {
        /// JSON Lines instead of text.
        package var json = false
        /// Print only the summary.
        package var verifyOnly = false
        /// Also print the state replay rebuilds.
        package var state = false
        /// The journal to read.
        package var path: String
    }

    /// The command line: its options, its one path, and the help text.
    package static let syntax = CommandSyntax(
        tool: "journal-dump", synopses: ["[--json] [--verify] [--state] PATH"],
        summary: "shows any journal, healthy or damaged, without changing it",
        options: [
            .flag("--json", help: "one JSON object per record, then a {\"summary\": …} line"),
            .flag("--verify", help: "print only the summary"),
            .flag("--state", help: """
                after the summary, the state replay rebuilds: records per kind,
                the outbox in order (each operation queued, sent or quarantined,
                with attempts, permanent failures and its last failure), cursors,
                base rows, conflicts (shape, policy, replacement, lost fields),
                rejections; with --json one {"state": …} object, the last line
                """),
        ],
        positionals: .exactly("PATH"),
        notes: """
            exit status: 0 clean, 1 damage found (or a state that cannot be rebuilt),
                         3 unsupported (intact, but a newer version wrote it: read-only),
                         64 usage error, 65 not a journal, 66 cannot open
            """)

    /// The help text.
    package static var usage: String { syntax.help }

    /// Parses arguments (without the program name).
    ///
    /// - Throws: ``CommandLineError`` for `--help` or a usage mistake.
    package static func parse(_ arguments: [String]) throws(CommandLineError) -> Options {
        let parsed = try syntax.parse(arguments)
        return Options(json: parsed.has("--json"), verifyOnly: parsed.has("--verify"), state: parsed.has("--state"), path: parsed.positionals[0])
    }

    /// Runs the command and returns its exit status.
    package static func run(arguments: [String], output: ToolOutput) -> Int32 {
        let options: Options
        do throws(CommandLineError) { options = try parse(arguments) } catch {
            return syntax.reject(error, to: output)
        }
        return run(options, output: output).rawValue
    }

    /// Runs the command with parsed options.
    package static func run(_ options: Options, output: ToolOutput) -> ToolExit {
        let reader = JournalReader(path: options.path, understands: StoreEvent.isUnderstood)
        var malformed = 0
        var unsupported = 0
        var headerPrinted = false
        var fold = Replayer.Fold()
        var foldFailure: Replayer.Failure?
        let report: JournalScanReport
        do {
            let header = try reader.header()
            if !options.json {
                output.standard("journal:  \(options.path)\n")
                output.standard("header:   " + (header.map(headerText) ?? "damaged") + "\n")
            }
            report = try reader.scan { record in
                if !options.json && !options.verifyOnly && !headerPrinted {
                    headerPrinted = true
                    output.standard(tableHeading(syncHorizons: record.syncHorizon != nil))
                }
                if options.state && foldFailure == nil {
                    do throws(Replayer.Failure) { try fold.fold(record) } catch { foldFailure = error }
                }
                var entry: JournalEntry?
                var event: StoreEvent?
                var problem: String?
                do throws(JournalEntry.DecodeError) {
                    (entry, event) = try decode(record)
                } catch {
                    entry = nil
                    event = nil
                    problem = error.description
                    if case .unsupportedType = error { unsupported += 1 } else { malformed += 1 }
                }
                guard !options.verifyOnly else { return }
                if options.json {
                    output.standard(jsonLine(record, entry, event, problem).serialized + "\n")
                } else {
                    output.standard(textLines(record, entry, event, problem))
                }
            }
        } catch let error as JournalError {
            switch error {
            case .notAJournal, .unsupportedVersion:
                output.error("journal-dump: \(error)\n")
                return .notAJournal
            default:
                output.error("journal-dump: \(error)\n")
                return .cannotOpen
            }
        } catch {
            output.error("journal-dump: \(error)\n")
            return .cannotOpen
        }

        // For damaged journals, how much a salvage could still recover beyond the prefix.
        var after = 0
        if case .corrupt = report.status, report.header != nil {
            after = (try? reader.recordsAfterDamage().count) ?? 0
        }
        if options.json {
            output.standard(jsonSummary(report, malformed: malformed, unsupported: unsupported, recordsAfterDamage: after).serialized + "\n")
        } else {
            output.standard(textSummary(report, malformed: malformed, unsupported: unsupported, recordsAfterDamage: after))
        }
        var stateRebuilt = true
        if options.state {
            // As Replayer.replay decides: corruption, a record not understood or an unfinished checkpoint means no state.
            if foldFailure == nil {
                do throws(Replayer.Failure) { try fold.finish(after: report) } catch { foldFailure = error }
            }
            let state: Result<StoreState, Replayer.Failure> = foldFailure.map { .failure($0) } ?? .success(fold.state)
            stateRebuilt = foldFailure == nil
            if options.json {
                output.standard(jsonState(state).serialized + "\n")
            } else {
                output.standard(textState(state, records: fold.records))
            }
        }
        if case .unsupported = report.status { return .unsupported }
        if report.status != .clean || malformed > 0 || unsupported > 0 || !stateRebuilt { return .damage }
        return .ok
    }

    // MARK: Formatting

    /// `value` as 16 hexadecimal digits after `0x`, as the header line shows generations.
    package static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// ISO 8601 in UTC with milliseconds, in the proleptic Gregorian
    /// calendar, independent of the machine's time zone.
    static func timestamp(_ milliseconds: Int64) -> String { CivilTime.iso8601(milliseconds: milliseconds) }
}

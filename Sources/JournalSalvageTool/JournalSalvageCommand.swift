import JournalDumpTool
import SyncJournalCommandLine
import SyncJournalCore

/// `journal-salvage SOURCE DEST [--keep-after-damage]`: the explicit way out
/// for a corrupt journal. Copies the valid prefix of SOURCE into a new journal
/// DEST (optionally also the valid records after the damage, flagged as
/// `salvaged`) and never modifies SOURCE. When SOURCE's header is damaged,
/// its records are read under a header rebuilt from them, and a `header:`
/// line between the other two says so.
package enum JournalSalvageCommand {
    /// The command line: a flag and the two paths.
    package static let syntax = CommandSyntax(
        tool: "journal-salvage", synopses: ["SOURCE DEST [--keep-after-damage]"],
        summary: "copies the valid prefix of SOURCE into the new journal DEST; SOURCE is not modified",
        options: [
            .flag("--keep-after-damage", help: "also copy valid records found after the damage, wrapped as `salvaged`"),
        ],
        positionals: .exactly("SOURCE", "DEST"),
        notes: "exit status: 0 copied, 1 failed, 64 usage error, 65 SOURCE is not a journal, 66 cannot open or write")

    /// The help text.
    package static var usage: String { syntax.help }

    /// Runs the command and returns its exit status.
    package static func run(arguments: [String], output: ToolOutput) async -> Int32 {
        let parsed: ParsedCommandLine
        do throws(CommandLineError) { parsed = try syntax.parse(arguments) } catch {
            return syntax.reject(error, to: output)
        }
        let keep = parsed.has("--keep-after-damage")
        let paths = parsed.positionals
        do {
            let result = try await JournalSalvage.salvage(from: paths[0], to: paths[1], includeRecordsAfterDamage: keep)
            if result.headerRebuilt {
                // The source as it stands (its header damaged), then the header its
                // records were read under, rebuilt as salvage rebuilt it, and how they read.
                let found = (try? JournalReader(path: paths[0]).scan().status.description) ?? "header damaged"
                output.standard("source:   \(paths[0]) (\(found))\n")
                let rebuilt = (try? JournalSalvage.rebuildHeader(path: paths[0])) ?? nil
                let fields = rebuilt.map { "format \($0.majorVersion), generation \(JournalDumpCommand.hex($0.generation)), first seq \($0.firstSequence); " } ?? ""
                output.standard("header:   rebuilt from the records: \(fields)journal id, continued generation and creation time "
                    + "as the damaged header has them; the records read \(result.sourceStatus) under it\n")
            } else {
                output.standard("source:   \(paths[0]) (\(result.sourceStatus))\n")
            }
            output.standard("salvaged: \(paths[1]): \(result.prefixRecords) records of the valid prefix"
                + (keep ? ", \(result.recordsAfterDamage) records from after the damage (type salvaged)" : "") + "\n")
            return ToolExit.ok.rawValue
        } catch let error as JournalError {
            output.error("journal-salvage: \(error)\n")
            switch error {
            case .notAJournal, .unsupportedVersion: return ToolExit.notAJournal.rawValue
            case .io, .alreadyExists, .missingBesideCheckpoint: return ToolExit.cannotOpen.rawValue
            case .unsupported: return ToolExit.unsupported.rawValue
            default: return ToolExit.damage.rawValue
            }
        } catch {
            output.error("journal-salvage: \(error)\n")
            return ToolExit.damage.rawValue
        }
    }
}

// journal-bench: the store's workloads against SQLite and the raw disk,
// interleaved in one process run (see `journal-bench --help`).
// The logic lives in JournalBenchTool, testable in-process.
import JournalBenchTool
import SyncJournalPlatform

let result = await JournalBenchCommand.main(Array(CommandLine.arguments.dropFirst())) { line in StandardStream.error.write(line) }
StandardStream.output.write(result.output)
StandardStream.error.write(result.errors)
SystemProcess.exit(result.status)

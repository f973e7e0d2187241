import JournalCrashTool
import SyncJournalCommandLine
import SyncJournalPlatform

// Thin entry point. Each line goes out with one write(2) so that `acked`
// lines are on stdout the moment the record is durable, even when killed.
let output = ToolOutput(standard: { StandardStream.output.write($0) }, error: { StandardStream.error.write($0) })
SystemProcess.exit(await JournalCrashCommand.run(arguments: Array(CommandLine.arguments.dropFirst()), output: output))

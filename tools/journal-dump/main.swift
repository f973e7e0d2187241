import Foundation
import JournalDumpTool
import SyncJournalCommandLine

// Thin entry point: the command lives in JournalDumpTool so tests run it in-process too.
let output = ToolOutput(
    standard: { FileHandle.standardOutput.write(Data($0.utf8)) },
    error: { FileHandle.standardError.write(Data($0.utf8)) }
)
exit(JournalDumpCommand.run(arguments: Array(CommandLine.arguments.dropFirst()), output: output))

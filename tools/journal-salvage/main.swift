import Foundation
import JournalSalvageTool
import SyncJournalCommandLine

// Thin entry point: the command lives in JournalSalvageTool.
let output = ToolOutput(
    standard: { FileHandle.standardOutput.write(Data($0.utf8)) },
    error: { FileHandle.standardError.write(Data($0.utf8)) }
)
exit(await JournalSalvageCommand.run(arguments: Array(CommandLine.arguments.dropFirst()), output: output))

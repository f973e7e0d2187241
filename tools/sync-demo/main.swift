import Foundation
import SyncDemoTool
import SyncJournalCommandLine

// Thin entry point: the demo lives in SyncDemoTool.
let output = ToolOutput(
    standard: { FileHandle.standardOutput.write(Data($0.utf8)) },
    error: { FileHandle.standardError.write(Data($0.utf8)) }
)
exit(await SyncDemoCommand.run(arguments: Array(CommandLine.arguments.dropFirst()), output: output))

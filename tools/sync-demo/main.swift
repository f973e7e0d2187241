import Foundation
import JournalTools

// Thin entry point: the demo lives in JournalTools.
let output = ToolOutput(
    standard: { FileHandle.standardOutput.write(Data($0.utf8)) },
    error: { FileHandle.standardError.write(Data($0.utf8)) }
)
exit(await SyncDemoCommand.run(arguments: Array(CommandLine.arguments.dropFirst()), output: output))

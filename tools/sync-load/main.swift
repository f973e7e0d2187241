// sync-load: N concurrent HTTP clients against a running sync-server for D seconds.
// The logic lives in SyncLoadTool (SyncLoadCommand, LoadRunner), testable in-process.
import Foundation
import SyncLoadTool

let result = await SyncLoadCommand.main(Array(CommandLine.arguments.dropFirst()))
FileHandle.standardOutput.write(Data(result.output.utf8))
FileHandle.standardError.write(Data(result.errors.utf8))
exit(result.status)

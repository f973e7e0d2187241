// sync-sim: the deterministic sync simulator and scenario runner.
//
//   sync-sim run FILE...                                       run scenario files
//   sync-sim --seed S --devices D --steps N [--faults LIST]   one seeded random run
//
// The logic lives in SyncSimTool (SyncSimCommand), testable in-process.
import Foundation
import SyncSimTool

let result = await SyncSimCommand.main(Array(CommandLine.arguments.dropFirst()))
FileHandle.standardOutput.write(Data(result.output.utf8))
FileHandle.standardError.write(Data(result.errors.utf8))
exit(result.status)

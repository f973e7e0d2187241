// notes: the example app, an offline-first notes command line over SyncJournal.
// The logic lives in NotesApp (NotesCommand, NotesRepository), testable in-process.
import Foundation
import NotesApp
import SyncJournalCommandLine

let output = ToolOutput(
    standard: { FileHandle.standardOutput.write(Data($0.utf8)) },
    error: { FileHandle.standardError.write(Data($0.utf8)) }
)
exit(await NotesCommand.run(arguments: Array(CommandLine.arguments.dropFirst()), output: output,
                            stopRequests: { StopRequests.signalsAndEndOfInput() }))

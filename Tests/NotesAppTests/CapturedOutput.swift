import Foundation
import SyncJournalCommandLine

/// A ``ToolOutput`` that keeps what a command prints, for the test to read.
final class CapturedOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var standardText = ""
    private var errorText = ""

    /// The output to hand to a command.
    var output: ToolOutput {
        ToolOutput(standard: { text in self.lock.withLock { self.standardText += text } },
                   error: { text in self.lock.withLock { self.errorText += text } })
    }

    /// What was printed on standard output.
    var standard: String { lock.withLock { standardText } }
    /// What was printed on standard error.
    var error: String { lock.withLock { errorText } }
}

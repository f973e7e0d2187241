import Foundation
import SyncJournalCommandLine

/// A ``ToolOutput`` that keeps what a command prints, for the test to read,
/// and wakes a test waiting for some text to be printed.
package final class CapturedOutput: @unchecked Sendable {
    /// A test waiting until what was printed satisfies a condition.
    private struct Waiter {
        var condition: @Sendable (_ standard: String, _ error: String) -> Bool
        var continuation: CheckedContinuation<Void, Never>
    }

    private let lock = NSLock()
    private var standardText = ""
    private var errorText = ""
    private var waiters: [Waiter] = []

    package init() {}

    /// The output to hand to a command.
    package var output: ToolOutput {
        ToolOutput(standard: { text in self.append(standard: text, error: "") },
                   error: { text in self.append(standard: "", error: text) })
    }

    /// What was printed on standard output.
    package var standard: String { lock.withLock { standardText } }
    /// What was printed on standard error.
    package var error: String { lock.withLock { errorText } }

    /// Returns once standard output holds `text` (at once if it already does).
    package func waitForStandard(containing text: String) async {
        await waitUntil { standard, _ in standard.contains(text) }
    }

    /// Returns once standard error holds `text` (at once if it already does).
    package func waitForError(containing text: String) async {
        await waitUntil { _, error in error.contains(text) }
    }

    /// Returns once what was printed satisfies `condition`, woken by each print (no polling).
    package func waitUntil(_ condition: @escaping @Sendable (_ standard: String, _ error: String) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let satisfied = lock.withLock { () -> Bool in
                if condition(standardText, errorText) { return true }
                waiters.append(Waiter(condition: condition, continuation: continuation))
                return false
            }
            if satisfied { continuation.resume() }
        }
    }

    private func append(standard: String, error: String) {
        let ready = lock.withLock { () -> [Waiter] in
            standardText += standard
            errorText += error
            let ready = waiters.filter { $0.condition(standardText, errorText) }
            waiters.removeAll { $0.condition(standardText, errorText) }
            return ready
        }
        for waiter in ready { waiter.continuation.resume() }
    }
}

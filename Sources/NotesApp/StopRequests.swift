import Foundation
import SyncJournalPlatform

/// What ends a long-running `notes watch` process: SIGINT (Ctrl-C), SIGTERM,
/// or the end of standard input (Ctrl-D, or the pipe closed by a parent process).
package enum StopRequests {
    /// A stream that yields once for each SIGINT or SIGTERM and once at the
    /// end of standard input. From this call on, those signals no longer end
    /// the process by themselves: the caller ends it cleanly.
    package static func signalsAndEndOfInput() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        // The handlers are in place once `install` returns, so a signal sent
        // as soon as the first listing shows is never lost. Should the pipe
        // not be had, the signals keep their default action: they end the
        // process, with no clean stop but no hang either.
        if let signals = try? StopSignals.install() {
            let waiter = Thread {
                while StopSignals.next(from: signals) != nil { continuation.yield() }
            }
            waiter.start()
        }
        let reader = Thread {
            // availableData blocks until input arrives and is empty only at its end.
            while !FileHandle.standardInput.availableData.isEmpty {}
            continuation.yield()
        }
        reader.start()
        return stream
    }
}

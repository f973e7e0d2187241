@preconcurrency import Dispatch
import Foundation

/// What ends a long-running `notes watch` process: SIGINT (Ctrl-C), SIGTERM,
/// or the end of standard input (Ctrl-D, or the pipe closed by a parent process).
package enum StopRequests {
    /// A stream that yields once for each SIGINT or SIGTERM and once at the
    /// end of standard input. From this call on, those signals no longer end
    /// the process by themselves: the caller ends it cleanly.
    package static func signalsAndEndOfInput() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let sources = [SIGINT, SIGTERM].map { number in
            // Ignored by the default handler, so the dispatch source receives it instead.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield() }
            source.resume()
            return source
        }
        let reader = Thread {
            // availableData blocks until input arrives and is empty only at its end.
            while !FileHandle.standardInput.availableData.isEmpty {}
            continuation.yield()
        }
        reader.start()
        continuation.onTermination = { _ in
            for source in sources { source.cancel() }
        }
        return stream
    }
}

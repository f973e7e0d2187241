import Foundation

/// What ends a long-running `notes watch` process: SIGINT (Ctrl-C), SIGTERM,
/// or the end of standard input (Ctrl-D, or the pipe closed by a parent process).
package enum StopRequests {
    /// A stream that yields once for each SIGINT or SIGTERM and once at the
    /// end of standard input. From this call on, those signals no longer end
    /// the process by themselves: the caller ends it cleanly.
    package static func signalsAndEndOfInput() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        // A handler can capture nothing and may only make async-signal-safe
        // calls, so it writes a byte to a pipe that a thread of its own reads.
        // The handlers are in place before this returns: a signal sent as soon
        // as the first listing shows is never lost. (Ignoring the signals and
        // then arming a Dispatch signal source leaves a moment in which one
        // is ignored and lost.) Should the pipe not be had, the signals keep
        // their default action: they end the process, uncleanly but with no hang.
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            stopPipeWriteEnd = ends[1]
            _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
            signal(SIGINT) { number in forwardStop(number) }
            signal(SIGTERM) { number in forwardStop(number) }
            let readEnd = ends[0]
            let waiter = Thread {
                var byte: UInt8 = 0
                while true {
                    let count = read(readEnd, &byte, 1)
                    if count == 1 { continuation.yield() } else if count < 0, errno == EINTR { continue } else { return }
                }
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

/// The pipe's write end, for the signal handler; set once, before any handler is in place.
nonisolated(unsafe) private var stopPipeWriteEnd: Int32 = -1

/// The signal handler: one `write` (safe in a handler); a full pipe drops
/// the byte, as a stop is already pending then.
private func forwardStop(_ number: Int32) {
    var byte = UInt8(truncatingIfNeeded: number)
    let saved = errno
    _ = write(stopPipeWriteEnd, &byte, 1)
    errno = saved
}

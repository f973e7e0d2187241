#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGINT and SIGTERM turned into bytes on a pipe, for a long-running
/// command that ends itself cleanly when asked to stop.
///
/// The handlers are in place when ``install()`` returns, so from then on
/// neither signal is lost or ends the process by itself. (Ignoring the
/// signals and then arming a Dispatch signal source leaves a moment in which
/// a signal is ignored and lost for good.)
///
/// ```swift
/// let signals = try StopSignals.install()
/// while let number = StopSignals.next(from: signals) { print("signal", number) }   // on a thread of its own
/// ```
package enum StopSignals {
    /// The pipe's write end, for the handler (which can capture nothing).
    /// Written once, before any handler is installed.
    nonisolated(unsafe) fileprivate static var writeEnd: Int32 = -1

    /// Installs the handlers once per process and returns the pipe's read
    /// end: each byte on it is one signal, its number.
    ///
    /// - Throws: the `errno` of the `pipe` or `sigaction` call that failed
    ///   (the signals then keep their default action).
    package static func install() throws(Errno) -> Int32 {
        let ends = try SystemPipe.make()
        // The waiter blocks on the read end. The write end stays non-blocking:
        // the handler must never block, and a full pipe drops the byte (a
        // stop is already pending then).
        _ = fcntl(ends.read, F_SETFL, fcntl(ends.read, F_GETFL) & ~O_NONBLOCK)
        writeEnd = ends.write
        for number in [SIGINT, SIGTERM] {
            var action = sigaction()
            #if canImport(Darwin)
            action.__sigaction_u.__sa_handler = { number in forwardStopSignal(number) }
            #else
            action.__sigaction_handler.sa_handler = { number in forwardStopSignal(number) }
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            guard sigaction(number, &action, nil) == 0 else { throw .current }
        }
        return ends.read
    }

    /// Blocks until the next signal arrives and returns its number; `nil` if
    /// the pipe can no longer be read.
    package static func next(from readEnd: Int32) -> Int32? {
        var byte: UInt8 = 0
        while true {
            let count = read(readEnd, &byte, 1)
            if count == 1 { return Int32(byte) }
            if count < 0, errno == EINTR { continue }
            return nil
        }
    }
}

/// The signal handler: one `write`, which is safe in a handler.
private func forwardStopSignal(_ number: Int32) {
    var byte = UInt8(truncatingIfNeeded: number)
    let saved = errno
    _ = write(StopSignals.writeEnd, &byte, 1)
    errno = saved
}

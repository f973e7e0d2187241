#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The current process and signals to others.
package enum SystemProcess {
    /// A signal number, named.
    package struct Signal: RawRepresentable, Sendable, Hashable {
        /// The platform's number for the signal.
        package let rawValue: Int32
        /// Wraps a signal number.
        package init(rawValue: Int32) { self.rawValue = rawValue }

        /// `SIGKILL`: ends the process at once; nothing runs after it.
        package static let kill = Signal(rawValue: SIGKILL)
        /// `SIGTERM`: asks the process to stop.
        package static let terminate = Signal(rawValue: SIGTERM)
        /// `SIGINT`: the interrupt key.
        package static let interrupt = Signal(rawValue: SIGINT)
    }

    /// This process's id.
    package static var id: Int32 { Int32(getpid()) }

    /// Sends `signal` to process `processID`.
    package static func send(_ signal: Signal, to processID: Int32) throws(Errno) {
        if kill(pid_t(processID), signal.rawValue) != 0 { throw .current }
    }

    /// Ends the process with `status` without returning.
    package static func exit(_ status: Int32) -> Never {
        systemExit(status)
    }

    /// Registers `handler` to run in the child after each `fork(2)`
    /// (`pthread_atfork`), so state that must not be shared with a parent
    /// (a random generator's seed) can be renewed.
    package static func afterForkInChild(_ handler: @convention(c) () -> Void) {
        _ = pthread_atfork(nil, nil, handler)
    }
}

private func systemExit(_ status: Int32) -> Never { exit(status) }

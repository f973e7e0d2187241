import CSyncJournalSpawn
import Foundation
import SyncJournalPlatform

/// A child process for tests, with the parts of Foundation's `Process` the
/// tests use. It starts the child with `posix_spawn`, closing every
/// descriptor above standard error in the child: on Linux, Foundation's
/// `Process.run()` scans `/proc/self/fd` for that and now and then reads
/// past the end of glibc's directory buffer, crashing the whole test run.
///
/// ```swift
/// let process = ChildProcess()
/// process.executableURL = BuiltTool.url(of: "notes")
/// process.arguments = ["list", "--dir", "a"]
/// try process.run()
/// process.waitUntilExit()
/// ```
package final class ChildProcess: @unchecked Sendable {
    /// Why a child could not start.
    package struct StartFailure: Error, CustomStringConvertible {
        /// The program.
        package var path: String
        /// The errno `posix_spawn` gave.
        package var code: Int32
        /// What failed, in words.
        package var description: String { "cannot start \(path): errno \(code)" }
    }

    /// The program to run.
    package var executableURL: URL?
    /// Its arguments, without its name.
    package var arguments: [String] = []
    /// Where it runs (`nil`: here).
    package var currentDirectoryURL: URL?
    /// Its standard input: a `Pipe` (the child reads its reading end), a `FileHandle`, or `nil` (this process's).
    package var standardInput: Any?
    /// Its standard output: a `Pipe` (the child writes its writing end), a `FileHandle`, or `nil`.
    package var standardOutput: Any?
    /// Its standard error, as ``standardOutput``.
    package var standardError: Any?

    private let lock = NSLock()
    private var pid: pid_t = 0
    private var ended: (exited: Bool, code: Int32)?

    /// A child not started yet.
    package init() {}

    /// The child's process id (0 before ``run()``).
    package var processIdentifier: Int32 { lock.withLock { pid } }

    /// Starts the child. The pipes' ends the child uses are closed here
    /// afterwards, so reading a pipe ends when the child (and only it) closes it.
    package func run() throws {
        guard let path = executableURL?.path else { throw StartFailure(path: "(no executable)", code: EINVAL) }
        let input = Self.descriptor(standardInput, reading: true)
        let output = Self.descriptor(standardOutput, reading: false)
        let error = Self.descriptor(standardError, reading: false)
        let words = [path] + arguments
        var argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { for word in argv { free(word) } }
        var child: pid_t = 0
        let result = argv.withUnsafeMutableBufferPointer { argv in
            if let directory = currentDirectoryURL?.path {
                return sj_spawn(path, argv.baseAddress, directory, input, output, error, &child)
            }
            return sj_spawn(path, argv.baseAddress, nil, input, output, error, &child)
        }
        guard result == 0 else { throw StartFailure(path: path, code: result) }
        lock.withLock { pid = child }
        for (handle, reading) in [(standardInput, true), (standardOutput, false), (standardError, false)] {
            if let pipe = handle as? Pipe { try? (reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting).close() }
        }
    }

    /// The descriptor the child gets for one of its standard streams (-1: this process's).
    private static func descriptor(_ stream: Any?, reading: Bool) -> Int32 {
        if let pipe = stream as? Pipe { return (reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting).fileDescriptor }
        if let handle = stream as? FileHandle { return handle.fileDescriptor }
        return -1
    }

    /// Whether the child still runs.
    package var isRunning: Bool { lock.withLock { reap(blocking: false) } }

    /// Waits for the child to end.
    package func waitUntilExit() {
        lock.withLock { _ = reap(blocking: true) }
    }

    /// Its exit status, or the signal that ended it (as Foundation's `Process` reports).
    package var terminationStatus: Int32 { lock.withLock { ended?.code ?? 0 } }

    /// How the child ended.
    package enum TerminationReason: Sendable, Hashable {
        /// It exited, with ``terminationStatus``.
        case exit
        /// A signal ended it, its number in ``terminationStatus``.
        case uncaughtSignal
    }

    /// How the child ended (`.exit` while it runs, as Foundation's `Process` answers).
    package var terminationReason: TerminationReason {
        lock.withLock { ended.map { $0.exited ? .exit : .uncaughtSignal } ?? .exit }
    }

    /// Sends SIGTERM.
    package func terminate() { send(.terminate) }

    /// Sends SIGINT.
    package func interrupt() { send(.interrupt) }

    private func send(_ signal: SystemProcess.Signal) {
        let child = processIdentifier
        if child > 0 { try? SystemProcess.send(signal, to: child) }
    }

    /// Collects the child's end when it has one; whether it still runs.
    private func reap(blocking: Bool) -> Bool {
        guard pid > 0, ended == nil else { return false }
        var exited: Int32 = 0
        var code: Int32 = 0
        let result = sj_wait(pid, blocking ? 1 : 0, &exited, &code)
        if result == 1 {
            ended = (exited == 1, code)
            return false
        }
        // 0: still running; an error (say ECHILD) means it is not ours to wait for any more.
        return result == 0
    }
}

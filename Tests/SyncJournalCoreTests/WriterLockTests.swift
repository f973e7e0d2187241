import Foundation
import SyncJournalCore
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

@Suite("Single writer")
struct WriterLockTests {
    @Test("A second writer in the same process is refused while the first is open, and admitted after it closes")
    func secondWriterInProcessIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("locked.journal")
            let first = try await JournalWriter.open(path: path, options: SampleJournal.options())
            await #expect(throws: JournalError.locked(path: path)) {
                try await JournalWriter.open(path: path, options: SampleJournal.options())
            }
            #expect(try await first.append(type: RecordType(rawValue: 1), payload: [1]) == 1)
            try await first.close()
            let second = try await JournalWriter.open(path: path, options: SampleJournal.options())
            // After the first's record and the closing record it ended with.
            #expect(second.nextSequence == first.nextSequence)
            #expect(second.nextSequence >= 3)
            try await second.close()
        }
    }

    @Test("Another process cannot take the journal's lock while a writer holds it, and can once it is closed")
    func otherProcessCannotTakeTheLock() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("shared.journal")
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options())
            #expect(try LockProbe.tryLock(path + ".lock") == false)
            try await writer.close()
            #expect(try LockProbe.tryLock(path + ".lock") == true)
        }
    }

    @Test("A writer is refused while another process holds the journal's lock")
    func writerIsRefusedWhileAnotherProcessHoldsTheLock() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("held.journal")
            try await SampleJournal.write(SampleJournal.payloads(1), to: path)
            let holder = try LockProbe.holdLock(path + ".lock")
            await #expect(throws: JournalError.locked(path: path)) {
                try await JournalWriter.open(path: path, options: SampleJournal.options())
            }
            try holder.release()
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options())
            // One edit and the first (bulk) writer's closing record.
            #expect(writer.nextSequence == 3)
            try await writer.close()
        }
    }
}

/// Takes the journal's lock (a POSIX record lock, `fcntl(F_SETLK)`) from a
/// separate process: `python3` with `fcntl.lockf`.
enum LockProbe {
    /// The process that runs `command` while holding the lock on `lockPath`
    /// (without waiting for it: exit status 1 when it is taken).
    private static func command(_ lockPath: String, thenRun command: [String]) -> (String, [String]) {
        let script = """
            import fcntl, subprocess, sys
            f = open(sys.argv[1], "a")
            try:
                fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                sys.exit(1)
            sys.exit(subprocess.call(sys.argv[2:]))
            """
        return ("/usr/bin/env", ["python3", "-c", script, lockPath] + command)
    }

    /// Whether another process could take the lock right now (it releases it at once).
    static func tryLock(_ lockPath: String) throws -> Bool {
        let (tool, arguments) = command(lockPath, thenRun: ["true"])
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// A process that holds the lock until ``Holder/release()``.
    struct Holder {
        let process: ChildProcess
        let input: Pipe

        /// Ends the process (it waits on its standard input) and so the lock.
        func release() throws {
            try input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }

    /// Starts a process that takes the lock, says so on its output, and keeps
    /// it until its input is closed. Returns once the lock is held.
    static func holdLock(_ lockPath: String) throws -> Holder {
        let (tool, arguments) = command(lockPath, thenRun: ["/bin/sh", "-c", "echo locked; cat >/dev/null"])
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // Blocks until the child has the lock (or exits without it).
        let line = output.fileHandleForReading.availableData
        guard String(decoding: line, as: UTF8.self).hasPrefix("locked") else {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            throw CocoaError(.fileLocking)
        }
        return Holder(process: process, input: input)
    }
}

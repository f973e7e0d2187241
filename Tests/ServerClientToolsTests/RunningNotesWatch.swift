import Foundation
import SyncJournalTestSupport
import SyncJournalTesting

/// The built `notes watch` running against a server: its standard input is a
/// pipe the test holds open, and its standard output is read line by line
/// as it arrives, so a test waits for a line (with a generous bound), never
/// for a length of time.
final class RunningNotesWatch: @unchecked Sendable {
    let process = ChildProcess()
    private let input = Pipe()
    private let output = Pipe()
    private let condition = NSCondition()
    private var lines: [String] = []
    private var ended = false

    init(_ arguments: [String], in directory: URL) throws {
        process.executableURL = BuiltTool.url(of: "notes")
        process.arguments = ["watch"] + arguments
        process.currentDirectoryURL = directory
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let reader = Thread { [self] in readLines() }
        reader.start()
    }

    /// Collects complete lines until the output ends.
    private func readLines() {
        var pending = Data()
        while true {
            let chunk = output.fileHandleForReading.availableData
            condition.lock()
            if chunk.isEmpty {
                ended = true
                condition.broadcast()
                condition.unlock()
                return
            }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                pending = Data(pending[pending.index(after: newline)...])
            }
            condition.broadcast()
            condition.unlock()
        }
    }

    /// The first line printed from `index` on that satisfies `matches`, with
    /// its index; `nil` if the output ends or `seconds` pass first.
    func line(from index: Int = 0, within seconds: Double = 60, where matches: (String) -> Bool) -> (index: Int, text: String)? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        var next = index
        while true {
            while next < lines.count {
                if matches(lines[next]) { return (next, lines[next]) }
                next += 1
            }
            if ended || !condition.wait(until: deadline) { return nil }
        }
    }

    /// Every line printed so far.
    var printed: [String] {
        condition.lock()
        defer { condition.unlock() }
        return lines
    }

    /// Closes standard input: the end of input asks `watch` to stop.
    func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    /// Waits for the process to end and returns its exit status (on a
    /// thread of its own: a watch that never ends must not also hold one of
    /// the concurrency pool's threads, which every other test needs).
    func waitForExit() async -> Int32 {
        await onThreadOfItsOwn { [process] in
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}

import Foundation
import Testing

/// Runs the package's built executables, as a user would from the shell.
enum ToolRunner {
    /// The package root (tests run the tools from there, with relative paths).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The directory holding the built products: the one the test binary runs from.
    static let binDirectory: URL = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        // On some layouts the test binary sits inside a bundle directory.
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("journal-dump").path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir
    }()

    struct Result {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    static func run(_ tool: String, _ arguments: [String], in directory: URL = packageRoot) throws -> Result {
        let process = Process()
        process.executableURL = binDirectory.appendingPathComponent(tool)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes to the end before waiting, so a full pipe never blocks the child.
        let errData = Captured()
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errData.set(err.fileHandleForReading.readDataToEndOfFile())
            finished.signal()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        finished.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, standardOutput: String(decoding: outData, as: UTF8.self),
                      standardError: String(decoding: errData.value, as: UTF8.self))
    }
}

/// Bytes handed over from a reader thread (the semaphore orders the accesses).
final class Captured: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = Data()
    func set(_ value: Data) { lock.lock(); stored = value; lock.unlock() }
    var value: Data { lock.lock(); defer { lock.unlock() }; return stored }
}

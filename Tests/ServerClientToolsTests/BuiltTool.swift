import Foundation

/// Runs the package's built executables as a user would from the shell.
enum BuiltTool {
    /// The directory holding the built products (the test binary runs from it or below it).
    static let binDirectory: URL = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("sync-server").path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir
    }()

    /// What a finished tool printed and how it exited.
    struct Result {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    /// Runs `tool` with `arguments` in `directory` to its end.
    static func run(_ tool: String, _ arguments: [String], in directory: URL) throws -> Result {
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
        let errors = CapturedBytes()
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errors.set(err.fileHandleForReading.readDataToEndOfFile())
            finished.signal()
        }
        let output = out.fileHandleForReading.readDataToEndOfFile()
        finished.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, standardOutput: String(decoding: output, as: UTF8.self),
                      standardError: String(decoding: errors.value, as: UTF8.self))
    }
}

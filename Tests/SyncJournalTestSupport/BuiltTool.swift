import Foundation

/// Runs the package's built executables (journal-crash, sync-server, notes, …)
/// as a user would from the shell.
package enum BuiltTool {
    /// The package root: tests run the tools from there, with relative paths.
    package static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Overrides where the tools are looked for, when they were built elsewhere.
    package static let directoryVariable = "SYNCJOURNAL_TOOLS_DIR"

    /// What a finished tool printed and how it exited.
    package struct Result {
        package var status: Int32
        package var standardOutput: String
        package var standardError: String
    }

    /// The built executable `tool`.
    ///
    /// The tools are built next to the test binary, but the test binary's own
    /// path is found differently on each system (`/proc/self/exe` exists only on
    /// Linux), and on macOS the process is `xctest` or the testing helper with the
    /// test bundle only loaded into it. So the walk starts from every place that
    /// may hold the bundle (loaded bundles, the main bundle, the command line) and
    /// climbs until a directory holds `tool`: on Linux the binary sits in
    /// `.build/<triple>/debug`, on macOS three levels below it, in
    /// `<Package>PackageTests.xctest/Contents/MacOS`. The checkout's `.build/debug`
    /// comes last, for a test run from a copied binary.
    package static func url(of tool: String) -> URL {
        if let directory = ProcessInfo.processInfo.environment[directoryVariable], !directory.isEmpty {
            return URL(fileURLWithPath: directory).appendingPathComponent(tool)
        }
        // The test bundle first: on macOS the main bundle is xctest's, in Xcode.
        let bundles = Bundle.allBundles.map(\.bundleURL)
        var starts = bundles.filter { $0.pathExtension == "xctest" } + bundles + [Bundle.main.bundleURL]
        if let executable = Bundle.main.executableURL { starts.append(executable) }
        starts += CommandLine.arguments.filter { $0.hasPrefix("/") || $0.hasPrefix(".") }.map { URL(fileURLWithPath: $0) }
        for start in starts {
            var directory = start.resolvingSymlinksInPath()
            while directory.pathComponents.count > 1 {
                let candidate = directory.appendingPathComponent(tool)
                if isExecutable(candidate) { return candidate }
                directory = directory.deletingLastPathComponent()
            }
        }
        return packageRoot.appendingPathComponent(".build/debug").appendingPathComponent(tool)
    }

    /// Runs `tool` with `arguments` in `directory` to its end.
    package static func run(_ tool: String, _ arguments: [String], in directory: URL = packageRoot) throws -> Result {
        let process = ChildProcess()
        process.executableURL = url(of: tool)
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

    /// A regular executable file: the package's `tools/notes` is a directory of sources, not the tool.
    private static func isExecutable(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && !isDirectory.boolValue
            && FileManager.default.isExecutableFile(atPath: url.path)
    }
}

import Dispatch
import Foundation
import SyncJournalPlatform

/// The fuzz targets, for the regression runner, the libFuzzer entry points
/// and the tests.
public enum FuzzTarget: String, Sendable, CaseIterable {
    /// ``FuzzJournalReader``: any bytes as a journal file.
    case journalReader = "journal-reader"
    /// ``FuzzServerReply``: any bytes as a script of server replies.
    case serverReply = "server-reply"
    /// ``FuzzWireMessages``: any bytes as the JSON body of a protocol message.
    case wireMessages = "wire-messages"

    /// Runs one input through the target, in-process.
    ///
    /// - Throws: ``FuzzFinding`` when an invariant does not hold.
    /// With `trace` (server replies only), each step is described to it.
    ///
    /// - Throws: ``FuzzFinding`` when an invariant does not hold.
    public func run(_ bytes: [UInt8], trace: (@Sendable (String) -> Void)? = nil) async throws(FuzzFinding) {
        switch self {
        case .journalReader: try await FuzzJournalReader.runAll(bytes)
        case .serverReply: try await FuzzServerReply.run(bytes, trace: trace)
        case .wireMessages: try FuzzWireMessages.run(bytes)
        }
    }

    /// Runs one input from a thread outside the Swift concurrency pool (the
    /// libFuzzer callback, a command-line tool), blocking until it ends.
    /// Never call it from async code.
    public func runBlocking(_ bytes: [UInt8], trace: (@Sendable (String) -> Void)? = nil) -> FuzzFinding? {
        let result = Mutex<FuzzFinding?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do throws(FuzzFinding) { try await self.run(bytes, trace: trace) } catch { result.withLock { $0 = error } }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }

    /// The hand-made seed inputs of the target (the journal reader's seeds
    /// are the journals under `journals/`; it has none of its own).
    public var seeds: [(name: String, bytes: [UInt8])] {
        switch self {
        case .journalReader: return []
        case .serverReply: return FuzzServerReply.seeds
        case .wireMessages: return FuzzWireMessages.seeds
        }
    }

    /// The libFuzzer entry point's body: runs the input and traps with the
    /// finding, so libFuzzer keeps the input as a crash.
    public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        if let finding = runBlocking(bytes) {
            FileHandle.standardError.write(Data("fuzz finding: \(finding)\n".utf8))
            fatalError("fuzz finding: \(finding)")
        }
        return 0
    }

    /// Writes the seeds into `directory` (created if missing), one file each.
    public func writeSeeds(to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for seed in seeds {
            try Data(seed.bytes).write(to: URL(fileURLWithPath: directory).appendingPathComponent("seed-\(seed.name)"))
        }
    }
}

/// The fuzz executables built normally: a regression runner that replays
/// files through a target, in-process, and reports each one.
///
/// ```sh
/// swift run fuzz-journal-reader journals/samples journals/fuzz-regressions/journal-reader
/// swift run fuzz-server-reply --make-seeds /tmp/corpus
/// ```
public enum FuzzRegressionRunner {
    /// The usage text for `target`.
    public static func usage(_ target: FuzzTarget) -> String {
        """
        usage: fuzz-\(target.rawValue) [--trace] [--make-seeds DIR] FILE|DIR...
          replays every file given (directories: every file in them but *.md, not recursing)
          through the \(target.rawValue) fuzz target, in-process
          --trace            describe each edit, request, reply and sync outcome (server-reply)
          --make-seeds DIR   write the target's hand-made seed inputs into DIR
        built with tools/fuzz.sh, the same target runs under libFuzzer instead
        exit status: 0 no finding, 1 a finding, 64 usage error, 66 a file cannot be read

        """
    }

    /// Runs the command with the process's arguments, writing to standard
    /// output and error, and exits with its status.
    public static func runCommandLine(_ target: FuzzTarget) -> Never {
        let output = ToolOutput(
            standard: { FileHandle.standardOutput.write(Data($0.utf8)) },
            error: { FileHandle.standardError.write(Data($0.utf8)) }
        )
        exit(run(target, arguments: Array(CommandLine.arguments.dropFirst()), output: output))
    }

    /// Runs the command (arguments without the program name) and returns its exit status.
    public static func run(_ target: FuzzTarget, arguments: [String], output: ToolOutput) -> Int32 {
        var paths: [String] = []
        var trace = false
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--help", "-h":
                output.standard(usage(target))
                return ToolExit.ok.rawValue
            case "--trace":
                trace = true
            case "--make-seeds":
                guard let directory = iterator.next() else {
                    output.error(usage(target))
                    return ToolExit.usage.rawValue
                }
                do { try target.writeSeeds(to: directory) } catch {
                    output.error("fuzz-\(target.rawValue): cannot write seeds to \(directory): \(error)\n")
                    return ToolExit.cannotOpen.rawValue
                }
                output.standard("wrote \(target.seeds.count) seeds to \(directory)\n")
            default:
                if argument.hasPrefix("-") {
                    output.error(usage(target))
                    return ToolExit.usage.rawValue
                }
                paths.append(argument)
            }
        }
        if paths.isEmpty && !arguments.contains("--make-seeds") {
            output.error(usage(target))
            return ToolExit.usage.rawValue
        }
        let files: [String]
        do { files = try expand(paths) } catch {
            output.error("fuzz-\(target.rawValue): \(error)\n")
            return ToolExit.cannotOpen.rawValue
        }
        var findings = 0
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                output.error("fuzz-\(target.rawValue): cannot read \(file)\n")
                return ToolExit.cannotOpen.rawValue
            }
            if trace { output.standard("\(file):\n") }
            let sink = output.standard
            var describe: (@Sendable (String) -> Void)?
            if trace { describe = { @Sendable line in sink("  " + line + "\n") } }
            if let finding = target.runBlocking(Array(data), trace: describe) {
                findings += 1
                output.standard("FAIL \(file): \(finding)\n")
            } else {
                output.standard("ok   \(file)\n")
            }
        }
        if !files.isEmpty { output.standard("\(files.count) inputs, \(findings) findings\n") }
        return findings == 0 ? ToolExit.ok.rawValue : ToolExit.damage.rawValue
    }

    /// A path that cannot be read.
    struct Unreadable: Error, CustomStringConvertible {
        var path: String
        var description: String { "cannot read \(path)" }
    }

    /// Files as given; directories replaced by their regular files, sorted (README files skipped).
    static func expand(_ paths: [String]) throws -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw Unreadable(path: path) }
            guard isDirectory.boolValue else {
                files.append(path)
                continue
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
            for name in names where !name.hasPrefix(".") && !name.hasSuffix(".md") {
                let full = (path as NSString).appendingPathComponent(name)
                var nested: ObjCBool = false
                if FileManager.default.fileExists(atPath: full, isDirectory: &nested), !nested.boolValue { files.append(full) }
            }
        }
        return files
    }
}

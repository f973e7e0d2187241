import Foundation
import SyncJournalCommandLine

/// The fuzz executables built normally: a regression runner that replays
/// files through a target, in-process, and reports each one.
///
/// ```sh
/// swift run fuzz-journal-reader journals/samples journals/fuzz-regressions/journal-reader
/// swift run fuzz-server-reply --make-seeds /tmp/corpus
/// ```
package enum FuzzRegressionRunner {
    /// The command line of `target`'s regression runner.
    package static func syntax(_ target: FuzzTarget) -> CommandSyntax {
        CommandSyntax(
            tool: "fuzz-\(target.rawValue)", synopses: ["[--trace] [--make-seeds DIR] FILE|DIR..."],
            summary: """
                replays every file given (directories: every file in them but *.md, not recursing)
                through the \(target.rawValue) fuzz target, in-process
                """,
            options: [
                .flag("--trace", help: "describe each edit, request, reply and sync outcome (server-reply)"),
                .value("--make-seeds", "DIR", help: "write the target's hand-made seed inputs into DIR"),
            ],
            positionals: .some("FILE|DIR"),
            notes: """
                built with tools/fuzz.sh, the same target runs under libFuzzer instead
                exit status: 0 no finding, 1 a finding, 64 usage error, 66 a file cannot be read
                """)
    }

    /// The help text for `target`.
    package static func usage(_ target: FuzzTarget) -> String { syntax(target).help }

    /// Runs the command with the process's arguments, writing to standard
    /// output and error, and exits with its status.
    package static func runCommandLine(_ target: FuzzTarget) -> Never {
        let output = ToolOutput(
            standard: { FileHandle.standardOutput.write(Data($0.utf8)) },
            error: { FileHandle.standardError.write(Data($0.utf8)) }
        )
        exit(run(target, arguments: Array(CommandLine.arguments.dropFirst()), output: output))
    }

    /// Runs the command (arguments without the program name) and returns its exit status.
    package static func run(_ target: FuzzTarget, arguments: [String], output: ToolOutput) -> Int32 {
        let syntax = syntax(target)
        let parsed: ParsedCommandLine
        do throws(CommandLineError) {
            parsed = try syntax.parse(arguments)
            if parsed.positionals.isEmpty && !parsed.has("--make-seeds") { throw .missingArgument("FILE|DIR") }
        } catch {
            return syntax.reject(error, to: output)
        }
        let trace = parsed.has("--trace")
        let paths = parsed.positionals
        for directory in parsed.values("--make-seeds") {
            do { try target.writeSeeds(to: directory) } catch {
                output.error("fuzz-\(target.rawValue): cannot write seeds to \(directory): \(error)\n")
                return ToolExit.cannotOpen.rawValue
            }
            output.standard("wrote \(target.seeds.count) seeds to \(directory)\n")
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

import Foundation
import SyncJournalPlatform
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalCommandLine

/// `journal-crash`: a writer for crash tests, and the sample generator.
///
/// - `journal-crash write PATH --records N [--group-commit]` appends N
///   operation records (creating PATH, or continuing it after recovery) and
///   prints `acked SEQ` on its own line, flushed, once each record is durable.
/// - `journal-crash store PATH --edits N [--seed S] [--editors E]` edits the
///   store at PATH through ``LocalStore`` from concurrent editors, with
///   transactions and checkpoints, printing `trying` and `acked` lines
///   (see ``StoreCrash``); `journal-crash store-verify PATH --acks FILE`
///   reopens it and checks every acknowledged edit against that output.
/// - `journal-crash samples DIR` writes the sample and golden journals under DIR.
package enum JournalCrashCommand {
    /// The command line: a subcommand, its path, and the writer's options.
    package static let syntax = CommandSyntax(
        tool: "journal-crash",
        synopses: ["write PATH --records N [--group-commit [--writers W] | --bulk] [--ack-ahead K]",
                   "store PATH --edits N [--seed S] [--editors E] [--ack-early]", "store-verify PATH --acks FILE", "samples DIR"],
        summary: """
            write: appends N operation records to PATH (creating it, or continuing it after
              recovery) and prints `acked SEQ`, flushed, once each record is durable
            store: edits the store at PATH from E concurrent editors (N calls each: creates,
              updates, deletes, transactions; checkpoints at random moments), printing
              `trying ID STATE ...` before and `acked ID STATE` after each call
            store-verify: reopens the store at PATH and checks it against the output FILE of
              `store`; exits 1 if an acknowledged edit is lost or a transaction is torn
            samples: writes the sample and golden journals under DIR
            """,
        options: [
            .value("--records", "N", help: "records to append (write)"),
            .flag("--group-commit", help: "append from concurrent writers, one sync per group"),
            .value("--writers", "W", help: "concurrent writers with --group-commit (default 16)"),
            .flag("--bulk", help: "append without syncing, one sync at the end"),
            .value("--ack-ahead", "K", help: "a negative control: print `acked` K ahead of what is durable"),
            .value("--edits", "N", help: "calls per editor (store)"),
            .value("--seed", "S", help: "the random seed (store; default: a random one, printed)"),
            .value("--editors", "E", help: "concurrent editors (store; default 4)"),
            .flag("--ack-early", help: "a negative control: print `acked`, then make the store call (store)"),
            .value("--acks", "FILE", help: "the output of `store` to check against (store-verify)"),
        ],
        positionals: CommandPositionals(names: ["COMMAND", "PATH"], minimum: 1, maximum: 2))

    /// The help text.
    package static var usage: String { syntax.help }

    /// What a command line asks `journal-crash` to do.
    enum Invocation: Equatable {
        /// Append records to a journal.
        case write(path: String, records: Int, mode: JournalWriter.Mode, writers: Int, ackAhead: Int)
        /// Edit a store through LocalStore.
        case store(path: String, options: StoreCrash.WriterOptions)
        /// Check a store against the output of `store`.
        case storeVerify(path: String, acks: String)
        /// Write the sample journals under a directory.
        case samples(directory: String)
    }

    /// Parses the arguments (without the program name).
    static func parse(_ arguments: [String]) throws(CommandLineError) -> Invocation {
        let parsed = try syntax.parse(arguments)
        let command = parsed.positionals[0]
        switch command {
        case "write":
            guard parsed.positionals.count == 2 else { throw .missingArgument("PATH") }
            guard let records = try parsed.integer("--records", atLeast: 0) else { throw .invalidCombination("write needs --records N") }
            let writers = try parsed.integer("--writers", atLeast: 1) ?? 16
            let ackAhead = try parsed.integer("--ack-ahead", atLeast: 0) ?? 0
            let groupCommit = parsed.has("--group-commit")
            let bulk = parsed.has("--bulk")
            if groupCommit && bulk { throw .invalidCombination("--group-commit and --bulk are two different writers; give one") }
            let mode: JournalWriter.Mode = bulk ? .bulk : (groupCommit ? .groupCommit : .durable)
            return .write(path: parsed.positionals[1], records: records, mode: mode, writers: writers, ackAhead: ackAhead)
        case "store":
            guard parsed.positionals.count == 2 else { throw .missingArgument("PATH") }
            guard let edits = try parsed.integer("--edits", atLeast: 0) else { throw .invalidCombination("store needs --edits N") }
            let seed = try parsed.unsigned("--seed") ?? UInt64.random(in: 0...UInt64(UInt32.max))
            let editors = try parsed.integer("--editors", in: 1...64) ?? 4
            return .store(path: parsed.positionals[1],
                          options: .init(seed: seed, editors: editors, edits: edits, ackEarly: parsed.has("--ack-early")))
        case "store-verify":
            guard parsed.positionals.count == 2 else { throw .missingArgument("PATH") }
            guard let acks = try parsed.nonEmptyValue("--acks", expected: "a file") else { throw .invalidCombination("store-verify needs --acks FILE") }
            return .storeVerify(path: parsed.positionals[1], acks: acks)
        case "samples":
            guard parsed.positionals.count == 2 else { throw .missingArgument("DIR") }
            guard parsed.given.isEmpty else { throw .invalidCombination("samples takes no options") }
            return .samples(directory: parsed.positionals[1])
        default:
            throw .unexpectedArgument(command)
        }
    }

    /// Runs the command and returns its exit status.
    package static func run(arguments: [String], output: ToolOutput) async -> Int32 {
        let invocation: Invocation
        do throws(CommandLineError) { invocation = try parse(arguments) } catch {
            return syntax.reject(error, to: output)
        }
        switch invocation {
        case .write(let path, let records, let mode, let writers, let ackAhead):
            return await write(path: path, records: records, mode: mode, writers: writers, ackAhead: ackAhead, output: output)
        case .store(let path, let options):
            return await StoreCrash.write(path: path, options: options, output: output)
        case .storeVerify(let path, let acks):
            return await storeVerify(path: path, acks: acks, output: output)
        case .samples(let directory):
            do {
                try await SampleJournals.write(into: directory)
                for file in SampleJournals.files { output.standard("wrote \(directory)/\(file.relativePath): \(file.purpose)\n") }
                return ToolExit.ok.rawValue
            } catch {
                output.error("journal-crash: \(error)\n")
                return ToolExit.damage.rawValue
            }
        }
    }

    /// Checks the store at `path` against the writer output in the file `acks`.
    static func storeVerify(path: String, acks: String, output: ToolOutput) async -> Int32 {
        let log: String
        do { log = try String(contentsOfFile: acks, encoding: .utf8) } catch {
            output.error("journal-crash: \(StoreCrash.CheckError.cannotReadLog(path: acks, reason: error.localizedDescription))\n")
            return ToolExit.cannotOpen.rawValue
        }
        let verification: StoreCrash.Verification
        do { verification = try await StoreCrash.verify(path: path, log: log) } catch {
            output.error("journal-crash: \(error)\n")
            return ToolExit.damage.rawValue
        }
        output.standard((verification.lost + verification.torn).map { $0 + "\n" }.joined() + verification.summary + "\n")
        return verification.passed ? ToolExit.ok.rawValue : ToolExit.damage.rawValue
    }

    /// The operation written as record number `n`: about 200 bytes, like a real edit.
    package static func crashOperation(_ n: Int) -> JournalOperation {
        JournalOperation(id: .random(), kind: .create, entity: "crash", recordID: "r\(n)",
                         fields: ["n": .int(Int64(n)), "note": .string(String(repeating: "edit \(n) ", count: 12).prefix(120).description)],
                         queuedAt: Int64(Date().timeIntervalSince1970 * 1000))
    }

    /// - Parameter ackAhead: a negative control for the crash test: print
    ///   `acked` for sequence numbers K ahead of what is durable, a lie the
    ///   crash test must catch.
    static func write(path: String, records: Int, mode: JournalWriter.Mode, writers: Int, ackAhead: Int = 0,
                      output: ToolOutput) async -> Int32 {
        let directory = FileIO.directory(of: path)
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let writer: JournalWriter
        do {
            // It appends store records, so it refuses, as a store does, a journal
            // holding a record type the store does not understand.
            writer = try await JournalWriter.open(path: path, options: .init(mode: mode, understands: StoreEvent.isUnderstood))
        } catch JournalError.unsupported(let path, let offset, let reason) {
            // Intact, but a newer version wrote it: refused, as journal-dump reports it.
            output.error("journal-crash: \(JournalError.unsupported(path: path, offset: offset, reason: reason))\n")
            return ToolExit.unsupported.rawValue
        } catch {
            output.error("journal-crash: \(error)\n")
            return ToolExit.damage.rawValue
        }
        let recovery = writer.recovery
        output.error("journal-crash: opened \(path) (\(recovery.created ? "created" : recovery.statusFound.description)), \(recovery.recordCount) records, cut \(recovery.bytesCut) bytes, next seq \(writer.nextSequence)\n")
        let remaining = Shared(records)
        let failed = Shared<String?>(nil)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<(mode == .groupCommit ? writers : 1) {
                group.addTask {
                    while true {
                        let take = remaining.withLock { count -> Bool in
                            if count == 0 { return false }
                            count -= 1
                            return true
                        }
                        guard take, failed.withLock({ $0 == nil }) else { return }
                        do {
                            let n = Int(writer.nextSequence)
                            let sequence = try await writer.append(type: .operation, payload: crashOperation(n).encoded())
                            // In bulk mode nothing is durable until the final sync.
                            if mode != .bulk { output.standard("acked \(sequence + UInt64(ackAhead))\n") }
                        } catch {
                            failed.withLock { $0 = "\(error)" }
                            return
                        }
                    }
                }
            }
        }
        if mode == .bulk && failed.withLock({ $0 == nil }) {
            let first = writer.nextSequence - UInt64(records)
            do {
                try await writer.sync()
                var lines = ""
                for sequence in first..<writer.nextSequence { lines += "acked \(sequence)\n" }
                output.standard(lines)
            } catch {
                failed.withLock { $0 = "\(error)" }
            }
        }
        try? await writer.close()
        if let message = failed.withLock({ $0 }) {
            output.error("journal-crash: \(message)\n")
            return ToolExit.damage.rawValue
        }
        return ToolExit.ok.rawValue
    }
}

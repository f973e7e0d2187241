import Foundation
import SyncJournalPlatform
import SyncJournalCore
import SyncJournalStore

/// `journal-crash`: a writer for crash tests, and the sample generator.
///
/// - `journal-crash write PATH --records N [--group-commit]` appends N
///   operation records (creating PATH, or continuing it after recovery) and
///   prints `acked SEQ` on its own line, flushed, once each record is durable.
/// - `journal-crash samples DIR` writes the sample and golden journals under DIR.
public enum JournalCrashCommand {
    /// The usage text.
    public static let usage = """
        usage: journal-crash write PATH --records N [--group-commit [--writers W] | --bulk] [--ack-ahead K]
               journal-crash samples DIR

        """

    /// Runs the command and returns its exit status.
    public static func run(arguments: [String], output: ToolOutput) async -> Int32 {
        guard let command = arguments.first else {
            output.error(usage)
            return ToolExit.usage.rawValue
        }
        switch command {
        case "write":
            var path: String?
            var records: Int?
            var groupCommit = false
            var bulk = false
            var ackAhead = 0
            var writers = 16
            var rest = arguments.dropFirst()[...]
            while let argument = rest.popFirst() {
                switch argument {
                case "--records":
                    guard let value = rest.popFirst().flatMap(Int.init), value >= 0 else { return usageError(output) }
                    records = value
                case "--writers":
                    guard let value = rest.popFirst().flatMap(Int.init), value > 0 else { return usageError(output) }
                    writers = value
                case "--group-commit": groupCommit = true
                case "--bulk": bulk = true
                case "--ack-ahead":
                    guard let value = rest.popFirst().flatMap(Int.init), value >= 0 else { return usageError(output) }
                    ackAhead = value
                default:
                    if argument.hasPrefix("-") || path != nil { return usageError(output) }
                    path = argument
                }
            }
            guard let path, let records, !(groupCommit && bulk) else { return usageError(output) }
            let mode: JournalWriter.Mode = bulk ? .bulk : (groupCommit ? .groupCommit : .durable)
            return await write(path: path, records: records, mode: mode, writers: writers, ackAhead: ackAhead, output: output)
        case "samples":
            guard arguments.count == 2 else { return usageError(output) }
            do {
                try await SampleJournals.write(into: arguments[1])
                for file in SampleJournals.files { output.standard("wrote \(arguments[1])/\(file.relativePath): \(file.purpose)\n") }
                return ToolExit.ok.rawValue
            } catch {
                output.error("journal-crash: \(error)\n")
                return ToolExit.damage.rawValue
            }
        case "--help", "-h":
            output.standard(usage)
            return ToolExit.ok.rawValue
        default:
            return usageError(output)
        }
    }

    private static func usageError(_ output: ToolOutput) -> Int32 {
        output.error(usage)
        return ToolExit.usage.rawValue
    }

    /// The operation written as record number `n`: about 200 bytes, like a real edit.
    public static func crashOperation(_ n: Int) -> JournalOperation {
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

/// A value shared by concurrent tasks under a lock.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

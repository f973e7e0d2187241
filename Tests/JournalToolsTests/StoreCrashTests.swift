import Foundation
import JournalCrashTool
import SyncJournalPlatform
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

@Suite("journal-crash store, killed with SIGKILL")
struct StoreCrashTests {
    /// Runs `journal-crash store` on `path` and kills it with SIGKILL once it
    /// has printed `acks` acknowledgements; returns its complete output lines.
    static func killedRun(path: String, seed: UInt64, acks: Int, ackEarly: Bool = false) throws -> String {
        let process = ChildProcess()
        process.executableURL = BuiltTool.url(of: "journal-crash")
        process.arguments = ["store", path, "--seed", "\(seed)", "--edits", "100000000"] + (ackEarly ? ["--ack-early"] : [])
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = Data()
        var seen = 0
        // The kill follows the writer's own output, not a timer.
        while seen < acks {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("acked ") }.count
            text.append(chunk)
        }
        try? SystemProcess.send(.kill, to: process.processIdentifier)
        process.waitUntilExit()
        text.append(out.fileHandleForReading.readDataToEndOfFile())
        let output = String(decoding: text, as: UTF8.self)
        // A line a kill cut short was never printed: drop it, so runs can be concatenated.
        guard let end = output.lastIndex(of: "\n") else { return "" }
        return String(output[...end])
    }

    @Test("the store keeps every acknowledged edit through kills, transactions all or nothing, earlier runs' edits too")
    func storeLosesNothing() async throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-store-crash"); defer { directory.remove() }
        let path = directory.file("store.journal")
        var everything = ""
        for round in 1...4 {
            let log = try Self.killedRun(path: path, seed: UInt64(round) * 1_000_003, acks: 20 + 60 * round)
            let verification = try await StoreCrash.verify(path: path, log: log)
            #expect(verification.passed, "round \(round): \(verification.lost + verification.torn)")
            #expect(verification.editsAcknowledged >= 20 + 60 * round, "\(verification.summary)")
            everything += log
        }
        let all = try await StoreCrash.verify(path: path, log: everything)
        #expect(all.passed, "\(all.lost + all.torn)")
    }

    @Test("the negative control, acknowledging before the store call, is caught")
    func earlyAcknowledgementIsCaught() async throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-store-crash"); defer { directory.remove() }
        let path = directory.file("store.journal")
        var lost = 0
        // Killed right after it printed acks, a writer that acks first almost
        // always has one of them in flight; a few rounds make a miss unlikely.
        for round in 1...5 where lost == 0 {
            let log = try Self.killedRun(path: path, seed: UInt64(round) * 7_000_001, acks: 50, ackEarly: true)
            lost += try await StoreCrash.verify(path: path, log: log).lost.count
        }
        #expect(lost > 0, "the early-acknowledging writer was not caught in 5 kills")
    }

    @Test("the checker counts only complete lines and refuses a malformed one")
    func parsesOutput() throws {
        let expected = try StoreCrash.expectations(from: "trying a v1\nacked a v1\ntrying a v2 b v1\nacked b v1\nacked c v")
        #expect(expected.acknowledged == ["a": .version(1), "b": .version(1)])
        #expect(expected.inFlight["a"]?.state == .version(2))
        #expect(expected.inFlight["b"] == nil)
        #expect(throws: StoreCrash.CheckError.self) { try StoreCrash.expectations(from: "acked a\n") }
    }
}

import Foundation
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

@Suite("sync-demo, the binary")
struct SyncDemoBinaryTests {
    @Test("sync-demo runs every step, every check holds, it exits 0 and leaves readable journals")
    func demoPasses() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let result = try BuiltTool.run("sync-demo", ["--dir", directory.file("demo")])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("checks held."))
        #expect(!result.standardOutput.contains("✗"))
        for step in 1...10 { #expect(result.standardOutput.contains("\n\(step). "), "step \(step) missing") }
        // One conflict resolved by each policy.
        for policy in ["server wins (the default policy)", "Client wins", "Merge fields", "Custom"] {
            #expect(result.standardOutput.contains(policy), "policy \(policy) not shown")
        }
        for device in ["A", "B"] {
            let dump = try BuiltTool.run("journal-dump", ["--verify", directory.file("demo/device-\(device).journal")])
            #expect(dump.status == 0, "device \(device): \(dump.standardOutput)")
        }
    }

    @Test("sync-demo rejects unknown arguments with exit status 64")
    func usage() throws {
        #expect(try BuiltTool.run("sync-demo", ["--bogus"]).status == 64)
        #expect(try BuiltTool.run("sync-demo", ["--dir"]).status == 64)
    }
}

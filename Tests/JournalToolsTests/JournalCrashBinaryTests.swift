import Foundation
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

@Suite("journal-crash, the binary")
struct JournalCrashBinaryTests {
    static func ackedSequences(_ output: String) -> [UInt64] {
        output.split(separator: "\n").compactMap { line in
            line.hasPrefix("acked ") ? UInt64(line.dropFirst(6)) : nil
        }
    }

    @Test("write prints acked for every record and a second run continues with the next sequence number")
    func writeAndContinue() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let path = directory.file("crash.journal")
        let first = try BuiltTool.run("journal-crash", ["write", path, "--records", "25"])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(Self.ackedSequences(first.standardOutput) == Array(1...25))
        // Every writer closes with a sync-horizon record (sequence 26 here),
        // so the next run continues after it.
        let second = try BuiltTool.run("journal-crash", ["write", path, "--records", "40", "--group-commit"])
        #expect(second.status == 0, "\(second.standardError)")
        #expect(second.standardError.contains("next seq 27"), "\(second.standardError)")
        #expect(Self.ackedSequences(second.standardOutput).sorted() == Array(27...66))
        let dump = try BuiltTool.run("journal-dump", ["--verify", path])
        #expect(dump.status == 0)
        #expect(dump.standardOutput.contains("records:  67 ("), "\(dump.standardOutput)")
        let records = try BuiltTool.run("journal-dump", ["--json", path]).standardOutput.split(separator: "\n")
        // The first run's closing record claims every record before it: its horizon is its own offset.
        #expect(records[25].contains("\"seq\":26,\"type\":\"sync-horizon\""), "\(records[25])")
        let offset = records[25].split(separator: ",").first { $0.hasPrefix("{\"offset\":") }?.dropFirst(10)
        #expect(offset.map { records[25].contains("\"horizon\":\($0),") } == true, "\(records[25])")
    }

    @Test("write continues a journal with a torn tail after cutting it off, and refuses a corrupt or unsupported one without changing it")
    func writeRecoversOrRefuses() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let torn = directory.file("torn.journal")
        try FileManager.default.copyItem(atPath: BuiltTool.packageRoot.appendingPathComponent("journals/samples/torn-tail.journal").path, toPath: torn)
        let resumed = try BuiltTool.run("journal-crash", ["write", torn, "--records", "3"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        // The healthy records are 1 to 6; the torn seventh is cut.
        #expect(Self.ackedSequences(resumed.standardOutput) == [7, 8, 9])
        #expect(resumed.standardError.contains("cut 40 bytes"))
        #expect(FileManager.default.fileExists(atPath: torn + ".torn-814"))
        #expect(try BuiltTool.run("journal-dump", ["--verify", torn]).status == 0)

        let corrupt = directory.file("corrupt.journal")
        try FileManager.default.copyItem(atPath: BuiltTool.packageRoot.appendingPathComponent("journals/samples/corrupt-middle.journal").path, toPath: corrupt)
        let before = try Data(contentsOf: URL(fileURLWithPath: corrupt))
        let refused = try BuiltTool.run("journal-crash", ["write", corrupt, "--records", "3"])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("corrupt at offset 351"))
        #expect(Self.ackedSequences(refused.standardOutput).isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: corrupt)) == before)

        // A journal a newer version wrote is read-only: refused (exit 3), never cut or appended to.
        let newer = directory.file("newer.journal")
        try FileManager.default.copyItem(atPath: BuiltTool.packageRoot.appendingPathComponent("journals/samples/unknown-type.journal").path, toPath: newer)
        let intact = try Data(contentsOf: URL(fileURLWithPath: newer))
        let readOnly = try BuiltTool.run("journal-crash", ["write", newer, "--records", "3"])
        #expect(readOnly.status == 3)
        #expect(readOnly.standardError.contains("read-only for this version"), "\(readOnly.standardError)")
        #expect(Self.ackedSequences(readOnly.standardOutput).isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: newer)) == intact)
    }

    @Test("journal-crash rejects a bad command line with exit status 64")
    func usage() throws {
        #expect(try BuiltTool.run("journal-crash", []).status == 64)
        #expect(try BuiltTool.run("journal-crash", ["write", "x.journal"]).status == 64)
        #expect(try BuiltTool.run("journal-crash", ["write", "x.journal", "--records", "many"]).status == 64)
        #expect(try BuiltTool.run("journal-crash", ["explode"]).status == 64)
    }
}

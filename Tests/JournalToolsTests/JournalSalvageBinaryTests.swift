import Foundation
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

@Suite("journal-salvage, the binary")
struct JournalSalvageBinaryTests {
    @Test("salvage copies the valid prefix of the corrupt sample into a clean journal and leaves the original as it was")
    func salvageCorruptSample() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let source = directory.file("corrupt.journal")
        try FileManager.default.copyItem(atPath: BuiltTool.packageRoot.appendingPathComponent("journals/samples/corrupt-middle.journal").path, toPath: source)
        let before = try Data(contentsOf: URL(fileURLWithPath: source))

        let plain = try BuiltTool.run("journal-salvage", [source, directory.file("prefix.journal")])
        #expect(plain.status == 0, "\(plain.standardError)")
        #expect(plain.standardOutput.contains("2 records of the valid prefix"))
        let dump = try BuiltTool.run("journal-dump", ["--json", directory.file("prefix.journal")])
        #expect(dump.status == 0)
        #expect(dump.standardOutput.contains("\"status\":\"clean\""))
        #expect(dump.standardOutput.contains("\"records\":2,"))

        let kept = try BuiltTool.run("journal-salvage", ["--keep-after-damage", source, directory.file("all.journal")])
        #expect(kept.status == 0, "\(kept.standardError)")
        #expect(kept.standardOutput.contains(", 3 records from after the damage (type salvaged)"))
        let keptDump = try BuiltTool.run("journal-dump", ["--json", directory.file("all.journal")])
        #expect(keptDump.standardOutput.contains("\"records\":5,"))
        // Records 4 to 6, wrapped.
        #expect(keptDump.standardOutput.components(separatedBy: "\"type\":\"salvaged\"").count - 1 == 3)

        #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == before)
    }

    @Test("salvage rebuilds a damaged header from the records, says so, and copies them all")
    func salvageDamagedHeader() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let source = BuiltTool.packageRoot.appendingPathComponent("journals/samples/damaged-header.journal").path
        let before = try Data(contentsOf: URL(fileURLWithPath: source))
        let result = try BuiltTool.run("journal-salvage", [source, directory.file("rebuilt.journal")])
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(result.standardOutput)")
        #expect(lines.first?.hasSuffix("(corrupt at offset 0: header checksum mismatch)") == true, "\(result.standardOutput)")
        #expect(lines.dropFirst().first?.hasPrefix("header:   rebuilt from the records: format 2, generation 0xa534a6a6b7fd0b63, first seq 1;") == true,
                "\(result.standardOutput)")
        #expect(lines.dropFirst().first?.hasSuffix("the records read clean under it") == true, "\(result.standardOutput)")
        #expect(lines.last?.hasSuffix("rebuilt.journal: 6 records of the valid prefix") == true, "\(result.standardOutput)")
        let dump = try BuiltTool.run("journal-dump", ["--json", directory.file("rebuilt.journal")])
        #expect(dump.status == 0)
        #expect(dump.standardOutput.contains("\"records\":6,"))
        #expect(dump.standardOutput.contains("\"journalId\":\"c1675e0b-b980-a575-a896-61fec08aa83b\""))
        #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == before)

        // A source whose header reads prints no header line.
        let plain = try BuiltTool.run("journal-salvage", [BuiltTool.packageRoot.appendingPathComponent("journals/samples/healthy.journal").path,
                                                           directory.file("copy.journal")])
        #expect(plain.status == 0)
        #expect(!plain.standardOutput.contains("header:"))
    }

    @Test("salvage refuses to overwrite an existing destination, and reports bad arguments and non-journals")
    func salvageRefusals() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let healthy = BuiltTool.packageRoot.appendingPathComponent("journals/samples/healthy.journal").path
        #expect(FileManager.default.createFile(atPath: directory.file("taken.journal"), contents: Data("keep me".utf8)))
        let refused = try BuiltTool.run("journal-salvage", [healthy, directory.file("taken.journal")])
        #expect(refused.status == 66)
        #expect(try String(contentsOfFile: directory.file("taken.journal"), encoding: .utf8) == "keep me")
        #expect(try BuiltTool.run("journal-salvage", [healthy]).status == 64)
        #expect(try BuiltTool.run("journal-salvage", ["--force", healthy, directory.file("x")]).status == 64)
        #expect(FileManager.default.createFile(atPath: directory.file("text"), contents: Data("hello".utf8)))
        #expect(try BuiltTool.run("journal-salvage", [directory.file("text"), directory.file("y")]).status == 65)
        #expect(try BuiltTool.run("journal-salvage", [directory.file("missing"), directory.file("z")]).status == 66)
    }
}

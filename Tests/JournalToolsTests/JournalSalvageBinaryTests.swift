import Foundation
import Testing

@Suite("journal-salvage, the binary")
struct JournalSalvageBinaryTests {
    @Test("salvage copies the valid prefix of the corrupt sample into a clean journal and leaves the original as it was")
    func salvageCorruptSample() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("corrupt.journal")
        try FileManager.default.copyItem(atPath: ToolRunner.packageRoot.appendingPathComponent("journals/samples/corrupt-middle.journal").path, toPath: source)
        let before = try Data(contentsOf: URL(fileURLWithPath: source))

        let plain = try ToolRunner.run("journal-salvage", [source, directory.path("prefix.journal")])
        #expect(plain.status == 0, "\(plain.standardError)")
        #expect(plain.standardOutput.contains("2 records of the valid prefix"))
        let dump = try ToolRunner.run("journal-dump", ["--json", directory.path("prefix.journal")])
        #expect(dump.status == 0)
        #expect(dump.standardOutput.contains("\"status\":\"clean\""))
        #expect(dump.standardOutput.contains("\"records\":2,"))

        let kept = try ToolRunner.run("journal-salvage", ["--keep-after-damage", source, directory.path("all.journal")])
        #expect(kept.status == 0, "\(kept.standardError)")
        let keptDump = try ToolRunner.run("journal-dump", ["--json", directory.path("all.journal")])
        #expect(keptDump.standardOutput.contains("\"records\":5,"))
        #expect(keptDump.standardOutput.components(separatedBy: "\"type\":\"salvaged\"").count - 1 == 3)

        #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == before)
    }

    @Test("salvage refuses to overwrite an existing destination, and reports bad arguments and non-journals")
    func salvageRefusals() throws {
        let directory = try TemporaryDirectory()
        let healthy = ToolRunner.packageRoot.appendingPathComponent("journals/samples/healthy.journal").path
        FileManager.default.createFile(atPath: directory.path("taken.journal"), contents: Data("keep me".utf8))
        let refused = try ToolRunner.run("journal-salvage", [healthy, directory.path("taken.journal")])
        #expect(refused.status == 66)
        #expect(try String(contentsOfFile: directory.path("taken.journal"), encoding: .utf8) == "keep me")
        #expect(try ToolRunner.run("journal-salvage", [healthy]).status == 64)
        #expect(try ToolRunner.run("journal-salvage", ["--force", healthy, directory.path("x")]).status == 64)
        FileManager.default.createFile(atPath: directory.path("text"), contents: Data("hello".utf8))
        #expect(try ToolRunner.run("journal-salvage", [directory.path("text"), directory.path("y")]).status == 65)
        #expect(try ToolRunner.run("journal-salvage", [directory.path("missing"), directory.path("z")]).status == 66)
    }
}

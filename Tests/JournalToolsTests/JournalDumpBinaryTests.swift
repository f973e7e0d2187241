import Foundation
import Testing

/// One expected run of the `journal-dump` binary: a sample, a mode, an exit status.
struct DumpCase: Sendable, CustomStringConvertible {
    var name: String
    var mode: String
    var status: Int32

    var journalPath: String {
        (name.hasPrefix("v1") ? "journals/golden/" : "journals/samples/") + name + ".journal"
    }
    var arguments: [String] {
        switch mode {
        case "json": return ["--json", journalPath]
        case "verify": return ["--verify", journalPath]
        case "state": return ["--state", journalPath]
        case "state-json": return ["--state", "--json", journalPath]
        default: return [journalPath]
        }
    }
    var expectedFile: URL {
        let expected = ToolRunner.packageRoot.appendingPathComponent("Tests/JournalToolsTests/Expected")
        switch mode {
        case "json": return expected.appendingPathComponent("\(name).jsonl")
        case "verify": return expected.appendingPathComponent("\(name).verify.txt")
        case "state": return expected.appendingPathComponent("\(name).state.txt")
        case "state-json": return expected.appendingPathComponent("\(name).state.jsonl")
        default: return expected.appendingPathComponent("\(name).txt")
        }
    }
    var description: String { "\(name) \(mode)" }

    static let all: [DumpCase] = {
        let url = ToolRunner.packageRoot.appendingPathComponent("Tests/JournalToolsTests/Expected/exit-codes.txt")
        let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 3, let status = Int32(parts[2]) else { return nil }
            return DumpCase(name: String(parts[0]), mode: String(parts[1]), status: status)
        }
    }()
}

@Suite("journal-dump, the binary")
struct JournalDumpBinaryTests {
    @Test("the expected-output manifest covers every sample in every mode")
    func manifestIsComplete() {
        #expect(DumpCase.all.count == 37)
        for name in ["healthy", "torn-tail", "corrupt-middle", "store", "store-checkpoint"] {
            for mode in ["text", "json", "verify", "state", "state-json"] {
                #expect(DumpCase.all.contains { $0.name == name && $0.mode == mode }, "missing \(name) \(mode)")
            }
        }
        for name in ["v1.1-conflicts", "v1.1-continued"] {
            for mode in ["text", "verify", "state", "state-json"] {
                #expect(DumpCase.all.contains { $0.name == name && $0.mode == mode }, "missing \(name) \(mode)")
            }
        }
    }

    @Test("journal-dump prints the expected output and exit status for each sample", arguments: DumpCase.all)
    func sampleOutput(_ dumpCase: DumpCase) throws {
        let result = try ToolRunner.run("journal-dump", dumpCase.arguments)
        let expected = try String(contentsOf: dumpCase.expectedFile, encoding: .utf8)
        #expect(result.status == dumpCase.status)
        #expect(result.standardOutput == expected)
    }

    @Test("the three samples are classified clean, torn-tail and corrupt with exit statuses 0, 1, 1")
    func samplesAreClassified() throws {
        let expectations = [("healthy", "clean", Int32(0), "null"), ("torn-tail", "torn-tail", 1, "742"),
                            ("corrupt-middle", "corrupt", 1, "327")]
        for (name, status, exit, offset) in expectations {
            let result = try ToolRunner.run("journal-dump", ["--json", "journals/samples/\(name).journal"])
            #expect(result.status == exit)
            let summary = result.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
            #expect(summary.contains("\"status\":\"\(status)\""), "\(name): \(summary)")
            #expect(summary.contains("\"damageOffset\":\(offset)"), "\(name): \(summary)")
        }
    }

    @Test("golden journals (1.0 and 1.1) still read exactly as when they were written")
    func goldenFilesReadExactly() throws {
        for name in ["v1-all-types", "v1-continued", "v1.1-conflicts", "v1.1-continued"] {
            let result = try ToolRunner.run("journal-dump", ["--json", "journals/golden/\(name).journal"])
            let expected = try String(contentsOf: ToolRunner.packageRoot.appendingPathComponent("journals/golden/\(name).dump.jsonl"), encoding: .utf8)
            #expect(result.status == 0)
            #expect(result.standardOutput == expected, "\(name) no longer reads as it did")
        }
    }

    @Test("the documented command reproduces the samples and golden files byte for byte")
    func samplesAreReproducible() throws {
        let directory = try TemporaryDirectory()
        let result = try ToolRunner.run("journal-crash", ["samples", directory.url.path])
        #expect(result.status == 0, "\(result.standardError)")
        for relative in ["samples/healthy.journal", "samples/torn-tail.journal", "samples/corrupt-middle.journal",
                         "samples/store.journal", "samples/store-checkpoint.journal",
                         "golden/v1-all-types.journal", "golden/v1-continued.journal",
                         "golden/v1.1-conflicts.journal", "golden/v1.1-continued.journal"] {
            let made = try Data(contentsOf: directory.url.appendingPathComponent(relative))
            let committed = try Data(contentsOf: ToolRunner.packageRoot.appendingPathComponent("journals/" + relative))
            #expect(made == committed, "\(relative) differs from what `journal-crash samples` makes")
            #expect(made.count < 100_000)
        }
    }

    @Test("usage errors exit 64, a file that is not a journal 65, a missing file 66")
    func exitStatuses() throws {
        let directory = try TemporaryDirectory()
        try Data("just some text, not a journal\n".utf8).write(to: directory.url.appendingPathComponent("notes.txt"))
        FileManager.default.createFile(atPath: directory.path("empty.journal"), contents: Data())
        #expect(try ToolRunner.run("journal-dump", []).status == 64)
        #expect(try ToolRunner.run("journal-dump", ["--bogus", "x"]).status == 64)
        #expect(try ToolRunner.run("journal-dump", ["a", "b"]).status == 64)
        #expect(try ToolRunner.run("journal-dump", [directory.path("notes.txt")]).status == 65)
        #expect(try ToolRunner.run("journal-dump", [directory.path("empty.journal")]).status == 65)
        let missing = try ToolRunner.run("journal-dump", [directory.path("missing.journal")])
        #expect(missing.status == 66)
        #expect(missing.standardError.contains("missing.journal"))
        #expect(try ToolRunner.run("journal-dump", [directory.url.path]).status == 66)
    }

    @Test("journal-dump reports an unknown major version as not readable (65), naming the version")
    func unknownMajorVersion() throws {
        let directory = try TemporaryDirectory()
        var bytes = try Data(contentsOf: ToolRunner.packageRoot.appendingPathComponent("journals/samples/healthy.journal"))
        bytes[8] = 2  // major version 2
        let path = directory.path("v2.journal")
        try bytes.write(to: URL(fileURLWithPath: path))
        let result = try ToolRunner.run("journal-dump", [path])
        #expect(result.status == 65)
        #expect(result.standardError.contains("2.0"))
    }

    @Test("journal-dump never modifies the file it reads, even a damaged one")
    func dumpIsReadOnly() throws {
        let directory = try TemporaryDirectory()
        for name in ["torn-tail", "corrupt-middle"] {
            let source = ToolRunner.packageRoot.appendingPathComponent("journals/samples/\(name).journal")
            let path = directory.path("\(name).journal")
            try FileManager.default.copyItem(atPath: source.path, toPath: path)
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            _ = try ToolRunner.run("journal-dump", [path])
            _ = try ToolRunner.run("journal-dump", ["--json", path])
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(name) }
            #expect(leftovers == ["\(name).journal"], "dump created \(leftovers)")
        }
    }

    @Test("every truncation of the healthy sample is reported as clean (at a record boundary) or torn-tail, never corrupt")
    func everyTruncationOfTheHealthySample() throws {
        let directory = try TemporaryDirectory()
        let full = try Data(contentsOf: ToolRunner.packageRoot.appendingPathComponent("journals/samples/healthy.journal"))
        let boundaries: Set<Int> = [80, 212, 327, 427, 493, 673, 742]
        // Every offset would mean ~660 process launches; step through every offset of the last two records
        // and every boundary, which covers each kind of cut. (In-process tests cover every offset of every record.)
        let offsets = Array(80...full.count).filter { $0 >= 493 || boundaries.contains($0) || $0 % 17 == 0 }
        for length in offsets {
            let path = directory.path("cut-\(length).journal")
            try full.prefix(length).write(to: URL(fileURLWithPath: path))
            let result = try ToolRunner.run("journal-dump", ["--verify", path])
            if boundaries.contains(length) {
                #expect(result.status == 0, "cut at \(length): \(result.standardOutput)")
            } else {
                #expect(result.status == 1, "cut at \(length)")
                #expect(result.standardOutput.contains("status:   torn-tail"), "cut at \(length): \(result.standardOutput)")
            }
        }
    }
}

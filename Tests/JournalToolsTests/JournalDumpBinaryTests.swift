import Foundation
import SyncJournalCore
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// One expected run of the `journal-dump` binary: a sample, a mode, an exit status.
struct DumpCase: Sendable, CustomStringConvertible {
    var name: String
    var mode: String
    var status: Int32

    var journalPath: String {
        (name.hasPrefix("v1") || name.hasPrefix("v2") ? "journals/golden/" : "journals/samples/") + name + ".journal"
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
        let expected = BuiltTool.packageRoot.appendingPathComponent("Tests/JournalToolsTests/Expected")
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
        let url = BuiltTool.packageRoot.appendingPathComponent("Tests/JournalToolsTests/Expected/exit-codes.txt")
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
    static let samples = ["healthy", "torn-tail", "corrupt-middle", "store", "store-checkpoint",
                          "reserved-field", "unknown-type", "power-cut-batch", "embedded-frame", "flipped-bit-last", "damaged-header"]

    @Test("the expected-output manifest covers every sample in every mode")
    func manifestIsComplete() {
        // 77 for the samples and the 1.x and 2.0 golden files,
        // 4 for v2.1-typed-values, 5 for v2.1-transactions, 5 for v2.3-model-versions, 5 for v2.4-server-identity,
        // 5 each for v2.5-shared-spaces and v2.5-shared-spaces-continued, 5 for v2.6-attachments.
        #expect(DumpCase.all.count == 77
                + 4
                + 5
                + 5
                + 5
                + 10
                + 5)
        for name in Self.samples {
            for mode in ["text", "json", "verify", "state", "state-json"] {
                #expect(DumpCase.all.contains { $0.name == name && $0.mode == mode }, "missing \(name) \(mode)")
            }
        }
        for name in ["v1.1-conflicts", "v1.1-continued", "v2-conflicts", "v2-continued",
                     "v2.1-typed-values"] {
            for mode in ["text", "verify", "state", "state-json"] {
                #expect(DumpCase.all.contains { $0.name == name && $0.mode == mode }, "missing \(name) \(mode)")
            }
        }
        for name in ["v1-all-types", "v1-continued", "v2-all-types"] {
            for mode in ["text", "verify"] {
                #expect(DumpCase.all.contains { $0.name == name && $0.mode == mode }, "missing \(name) \(mode)")
            }
        }
        for mode in ["text", "json", "verify", "state", "state-json"] {
            #expect(DumpCase.all.contains { $0.name == "v2.1-transactions" && $0.mode == mode }, "missing v2.1-transactions \(mode)")
            #expect(DumpCase.all.contains { $0.name == "v2.3-model-versions" && $0.mode == mode }, "missing v2.3-model-versions \(mode)")
            #expect(DumpCase.all.contains { $0.name == "v2.4-server-identity" && $0.mode == mode }, "missing v2.4-server-identity \(mode)")
            #expect(DumpCase.all.contains { $0.name == "v2.5-shared-spaces" && $0.mode == mode }, "missing v2.5-shared-spaces \(mode)")
            #expect(DumpCase.all.contains { $0.name == "v2.5-shared-spaces-continued" && $0.mode == mode },
                    "missing v2.5-shared-spaces-continued \(mode)")
            #expect(DumpCase.all.contains { $0.name == "v2.6-attachments" && $0.mode == mode }, "missing v2.6-attachments \(mode)")
        }
    }

    @Test("journal-dump prints the expected output and exit status for each sample", arguments: DumpCase.all)
    func sampleOutput(_ dumpCase: DumpCase) throws {
        let result = try BuiltTool.run("journal-dump", dumpCase.arguments)
        let expected = try String(contentsOf: dumpCase.expectedFile, encoding: .utf8)
        #expect(result.status == dumpCase.status)
        #expect(result.standardOutput == expected)
    }

    @Test("each sample is classified as it was made to be, with its exit status",
          arguments: [
            ("healthy", "clean", Int32(0), "\"damageOffset\":null,\"damage\":null,"),
            ("torn-tail", "torn-tail", 1, "\"damageOffset\":814,\"damage\":\"incomplete record"),
            ("corrupt-middle", "corrupt", 1, "\"damageOffset\":351,\"damage\":\"checksum mismatch in bytes that were durable"),
            // A power cut lost the first record of a group commit; the two after it were written
            // in the same unsynced window and claim nothing past the cut.
            ("power-cut-batch", "torn-tail", 1, "\"damageOffset\":814,\"damage\":\"record header checksum mismatch\""),
            // The frame inside the torn record's payload claims a horizon past the cut, but is never taken for a record.
            ("embedded-frame", "torn-tail", 1, "\"damageOffset\":814,\"damage\":\"checksum mismatch\""),
            ("flipped-bit-last", "corrupt", 1, "\"damageOffset\":733,\"damage\":\"checksum mismatch: a flipped bit at offset 811, bit 2"),
            // A flipped version bit is damage (the checksum is checked first), never a future format.
            ("damaged-header", "corrupt", 1, "\"damageOffset\":0,\"damage\":\"header checksum mismatch\""),
            ("reserved-field", "unsupported", 3,
             "\"damageOffset\":null,\"damage\":null,\"unsupportedOffset\":814,\"unsupportedReason\":\"record 7 has reserved field 1"),
            ("unknown-type", "unsupported", 3,
             "\"damageOffset\":null,\"damage\":null,\"unsupportedOffset\":814,\"unsupportedReason\":\"record 7 has type 0x00f0"),
          ])
    func samplesAreClassified(_ name: String, _ status: String, _ exit: Int32, _ members: String) throws {
        let result = try BuiltTool.run("journal-dump", ["--json", "journals/samples/\(name).journal"])
        #expect(result.status == exit, "\(name)")
        let summary = result.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
        #expect(summary.contains("\"status\":\"\(status)\",\(members)"), "\(name): \(summary)")
        #expect(summary.contains("unsupportedOffset") == (status == "unsupported"), "\(name): \(summary)")
    }

    @Test("the records after a format-2 torn tail: none claims the cut bytes were durable, and no frame inside a payload is one")
    func recordsAfterATornTail() throws {
        let root = BuiltTool.packageRoot.appendingPathComponent("journals/samples")
        let batch = try JournalReader(path: root.appendingPathComponent("power-cut-batch.journal").path).recordsAfterDamage()
        #expect(batch.map(\.sequence) == [8, 9])
        #expect(batch.allSatisfy { $0.syncHorizon == 814 })
        #expect(try JournalReader(path: root.appendingPathComponent("embedded-frame.journal").path).recordsAfterDamage().isEmpty)
    }

    @Test("format-2 records show their sync horizon, 1.x records none, and a bulk writer's closing record is named")
    func syncHorizons() throws {
        let v2 = try BuiltTool.run("journal-dump", ["--json", "journals/golden/v2-all-types.journal"])
        let lines = v2.standardOutput.split(separator: "\n").dropLast()
        #expect(lines.allSatisfy { $0.contains(",\"horizon\":") }, "\(v2.standardOutput)")
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let bulk = directory.file("bulk.journal")
        let written = try BuiltTool.run("journal-crash", ["write", bulk, "--records", "3", "--bulk"])
        #expect(written.status == 0, "\(written.standardError)")
        let closing = try BuiltTool.run("journal-dump", ["--json", bulk]).standardOutput.split(separator: "\n").dropLast().last
        #expect(closing?.contains("\"seq\":4,\"type\":\"sync-horizon\",\"horizon\":") == true, "\(closing ?? "")")
        let v1 = try BuiltTool.run("journal-dump", ["--json", "journals/golden/v1-all-types.journal"])
        #expect(!v1.standardOutput.contains("horizon"))
        let text = try BuiltTool.run("journal-dump", ["journals/samples/healthy.journal"])
        #expect(text.standardOutput.contains("   offset     seq    horizon  type "))
        #expect(text.standardOutput.contains("      733       6        733  operation delete pin "))
        #expect(!(try BuiltTool.run("journal-dump", ["journals/golden/v1-all-types.journal"])).standardOutput.contains("horizon"))
    }

    @Test("a record of the reserved type 0x0102 is not understood: the journal is unsupported there, exit 3, and no state is rebuilt")
    func reservedCursorsRecord() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let healthy = try Data(contentsOf: BuiltTool.packageRoot.appendingPathComponent("journals/samples/healthy.journal"))
        let header = try #require(try JournalReader(path: BuiltTool.packageRoot.appendingPathComponent("journals/samples/healthy.journal").path).header())
        let record = RecordFrame.encode(type: RecordType(rawValue: 0x0102), generation: header.generation, sequence: 7,
                                        horizon: Int64(healthy.count), payload: [0])
        let path = directory.file("cursors.journal")
        try (healthy + record).write(to: URL(fileURLWithPath: path))
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let json = try BuiltTool.run("journal-dump", ["--json", "--state", path])
        #expect(json.status == 3)
        let lines = json.standardOutput.split(separator: "\n")
        #expect(lines.count == 8, "\(json.standardOutput)")  // the 6 records before it, the summary, the state
        #expect(lines.dropLast().last?.contains("\"status\":\"unsupported\"") == true)
        #expect(lines.dropLast().last?.contains("\"unsupportedOffset\":814,\"unsupportedReason\":\"record 7 has type 0x0102") == true)
        #expect(lines.last?.hasPrefix("{\"state\":null,\"stateError\":\"read-only for this version") == true)
        let text = try BuiltTool.run("journal-dump", [path])
        #expect(text.status == 3)
        #expect(text.standardOutput.contains("status:   unsupported at offset 814"))
        #expect(text.standardOutput.contains("nothing is cut"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("golden journals (1.0, 1.1, 2.0, 2.1, 2.3, 2.4, 2.5 and 2.6) still read exactly as when they were written")
    func goldenFilesReadExactly() throws {
        for name in ["v1-all-types", "v1-continued", "v1.1-conflicts", "v1.1-continued", "v2-all-types", "v2-conflicts", "v2-continued",
                     "v2.1-typed-values",
                     "v2.1-transactions",
                     "v2.3-model-versions",
                     "v2.4-server-identity",
                     "v2.5-shared-spaces", "v2.5-shared-spaces-continued",
                     "v2.6-attachments"] {
            let result = try BuiltTool.run("journal-dump", ["--json", "journals/golden/\(name).journal"])
            let expected = try String(contentsOf: BuiltTool.packageRoot.appendingPathComponent("journals/golden/\(name).dump.jsonl"), encoding: .utf8)
            #expect(result.status == 0)
            #expect(result.standardOutput == expected, "\(name) no longer reads as it did")
        }
    }

    @Test("the documented command reproduces the samples and golden files byte for byte")
    func samplesAreReproducible() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let result = try BuiltTool.run("journal-crash", ["samples", directory.url.path])
        #expect(result.status == 0, "\(result.standardError)")
        for relative in ["samples/healthy.journal", "samples/torn-tail.journal", "samples/corrupt-middle.journal",
                         "samples/store.journal", "samples/store-checkpoint.journal",
                         "golden/v1-all-types.journal", "golden/v1-continued.journal",
                         "golden/v1.1-conflicts.journal", "golden/v1.1-continued.journal",
                         "golden/v2-all-types.journal", "golden/v2-conflicts.journal", "golden/v2-continued.journal",
                         "golden/v2.1-typed-values.journal",
                         "golden/v2.1-transactions.journal",
                         "golden/v2.3-model-versions.journal",
                         "golden/v2.4-server-identity.journal",
                         "golden/v2.5-shared-spaces.journal", "golden/v2.5-shared-spaces-continued.journal",
                         "golden/v2.6-attachments.journal",
                         "samples/reserved-field.journal", "samples/unknown-type.journal", "samples/power-cut-batch.journal",
                         "samples/embedded-frame.journal", "samples/flipped-bit-last.journal", "samples/damaged-header.journal"] {
            let made = try Data(contentsOf: directory.url.appendingPathComponent(relative))
            let committed = try Data(contentsOf: BuiltTool.packageRoot.appendingPathComponent("journals/" + relative))
            #expect(made == committed, "\(relative) differs from what `journal-crash samples` makes")
            #expect(made.count < 100_000)
        }
    }

    @Test("usage errors exit 64, a file that is not a journal 65, a missing file 66")
    func exitStatuses() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        try Data("just some text, not a journal\n".utf8).write(to: directory.url.appendingPathComponent("notes.txt"))
        #expect(FileManager.default.createFile(atPath: directory.file("empty.journal"), contents: Data()))
        #expect(try BuiltTool.run("journal-dump", []).status == 64)
        #expect(try BuiltTool.run("journal-dump", ["--bogus", "x"]).status == 64)
        #expect(try BuiltTool.run("journal-dump", ["a", "b"]).status == 64)
        #expect(try BuiltTool.run("journal-dump", [directory.file("notes.txt")]).status == 65)
        #expect(try BuiltTool.run("journal-dump", [directory.file("empty.journal")]).status == 65)
        let missing = try BuiltTool.run("journal-dump", [directory.file("missing.journal")])
        #expect(missing.status == 66)
        #expect(missing.standardError.contains("missing.journal"))
        #expect(try BuiltTool.run("journal-dump", [directory.url.path]).status == 66)
    }

    @Test("journal-dump reports an unknown major version as not readable (65), naming the version; a flipped version bit is damage")
    func unknownMajorVersion() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        var bytes = [UInt8](try Data(contentsOf: BuiltTool.packageRoot.appendingPathComponent("journals/samples/healthy.journal")))
        bytes[8] = 3  // major version 3, under a checksum that verifies: a future format
        let checksum = CRC32C.mask(CRC32C.checksum(bytes[0..<76]))
        for i in 0..<4 { bytes[76 + i] = UInt8(truncatingIfNeeded: checksum >> UInt32(8 * i)) }
        let path = directory.file("v3.journal")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let result = try BuiltTool.run("journal-dump", [path])
        #expect(result.status == 65)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.contains("3.0"))

        // The same version without its checksum: the header is damaged, not from the future.
        let damaged = try BuiltTool.run("journal-dump", ["--json", "journals/samples/damaged-header.journal"])
        #expect(damaged.status == 1)
        #expect(damaged.standardOutput.contains("\"status\":\"corrupt\",\"damageOffset\":0,\"damage\":\"header checksum mismatch\""))
        #expect(damaged.standardOutput.contains("\"header\":null"))
    }

    @Test("journal-dump never modifies the file it reads, even a damaged one")
    func dumpIsReadOnly() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        for name in ["torn-tail", "corrupt-middle", "power-cut-batch", "reserved-field", "damaged-header"] {
            let source = BuiltTool.packageRoot.appendingPathComponent("journals/samples/\(name).journal")
            let path = directory.file("\(name).journal")
            try FileManager.default.copyItem(atPath: source.path, toPath: path)
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            _ = try BuiltTool.run("journal-dump", [path])
            _ = try BuiltTool.run("journal-dump", ["--json", path])
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(name) }
            #expect(leftovers == ["\(name).journal"], "dump created \(leftovers)")
        }
    }

    @Test("every truncation of the healthy sample is reported as clean (at a record boundary) or torn-tail, never corrupt")
    func everyTruncationOfTheHealthySample() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let full = try Data(contentsOf: BuiltTool.packageRoot.appendingPathComponent("journals/samples/healthy.journal"))
        let boundaries: Set<Int> = [80, 224, 351, 463, 541, 733, 814]
        // Every offset would mean ~730 process launches; step through every offset of the last record and
        // every boundary, which covers each kind of cut. (In-process tests cover every offset of every record.)
        let offsets = Array(80...full.count).filter { $0 >= 733 || boundaries.contains($0) || $0 % 17 == 0 }
        for length in offsets {
            let path = directory.file("cut-\(length).journal")
            try full.prefix(length).write(to: URL(fileURLWithPath: path))
            let result = try BuiltTool.run("journal-dump", ["--verify", path])
            if boundaries.contains(length) {
                #expect(result.status == 0, "cut at \(length): \(result.standardOutput)")
            } else {
                #expect(result.status == 1, "cut at \(length)")
                #expect(result.standardOutput.contains("status:   torn-tail"), "cut at \(length): \(result.standardOutput)")
            }
        }
    }
}

import Foundation
import FuzzTool
import JournalDumpTool
import SyncJournalCommandLine
import SyncJournalCore
import SyncJournalStore
import SyncJournalPlatform
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// The fuzz targets' regression corpus, run in plain `swift test`: every
/// seed and every input a fuzzer ever found (`journals/fuzz-regressions/`)
/// goes through the same in-process checks `tools/fuzz.sh` runs under
/// libFuzzer, so a crash or broken invariant found once stays fixed.
@Suite("Fuzz targets: seeds and regressions")
struct FuzzRegressionTests {
    static let root = BuiltTool.packageRoot

    /// Regular files of `directory` (relative to the package root) whose
    /// names end in one of `suffixes` (any name when empty), sorted; never a README.
    static func files(in directory: String, suffixes: [String] = []) -> [String] {
        let url = root.appendingPathComponent(directory)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.filter { name in
            !name.hasPrefix(".") && !name.hasSuffix(".md") && (suffixes.isEmpty || suffixes.contains { name.hasSuffix($0) })
        }.sorted().map { directory + "/" + $0 }
    }

    static let journalSeeds = files(in: "journals/samples", suffixes: [".journal"]) + files(in: "journals/golden", suffixes: [".journal"])
    static let journalRegressions = files(in: "journals/fuzz-regressions/journal-reader")
    static let replyRegressions = files(in: "journals/fuzz-regressions/server-reply")

    static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: root.appendingPathComponent(path)))
    }

    @Test("the seed and regression directories are there")
    func corpusIsThere() {
        #expect(Self.journalSeeds.count >= 18)
        #expect(Self.journalRegressions.count >= 11)
        #expect(Self.journalRegressions.contains { $0.hasSuffix("/format2-torn-record-then-records-of-the-same-window.journal") })
        #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("journals/fuzz-regressions/README.md").path))
    }

    @Test("journal reader: every seed journal and every regression input keeps every invariant",
          arguments: journalSeeds + journalRegressions)
    func journalReaderInput(_ path: String) async throws {
        let input = try Self.bytes(path)
        do { try await FuzzTarget.journalReader.run(input) } catch {
            Issue.record("\(path): \(error)")
        }
    }

    @Test("wire messages: every hand-made seed decodes and is a fixed point of its codec", arguments: FuzzWireMessages.seeds.map(\.name))
    func wireMessageSeed(name: String) throws {
        let seed = try #require(FuzzWireMessages.seeds.first { $0.name == name })
        try FuzzWireMessages.run(seed.bytes)
    }

    @Test("wire messages: every truncation and every single-byte change of every seed keeps every invariant")
    func wireMessageMutations() throws {
        for seed in FuzzWireMessages.seeds {
            for length in 0...seed.bytes.count { try FuzzWireMessages.run(Array(seed.bytes.prefix(length))) }
            for index in 1..<seed.bytes.count {
                for byte: UInt8 in [0, 0x22, 0x2C, 0x30, 0x5C, 0x7B, 0x7D, 0xFF] {
                    var changed = seed.bytes
                    changed[index] = byte
                    try FuzzWireMessages.run(changed)
                }
            }
        }
    }

    @Test("server replies: every hand-made seed keeps every invariant", arguments: FuzzServerReply.seeds.map(\.name))
    func serverReplySeed(_ name: String) async throws {
        let seed = try #require(FuzzServerReply.seeds.first { $0.name == name })
        do { try await FuzzTarget.serverReply.run(seed.bytes) } catch {
            Issue.record("seed \(name): \(error)")
        }
    }

    @Test("server replies: every regression input keeps every invariant", arguments: replyRegressions)
    func serverReplyRegression(_ path: String) async throws {
        let input = try Self.bytes(path)
        do { try await FuzzTarget.serverReply.run(input) } catch {
            Issue.record("\(path): \(error)")
        }
    }

    // MARK: What the regressions found

    /// The journals the first fuzz runs found, and what replay says of them
    /// now: each verified record is refused as inconsistent instead of
    /// trapping (a compaction step replacing an operation by one on another
    /// record hit `Outbox.update`'s precondition) or of rebuilding a state a
    /// checkpoint does not keep (an acknowledgement row of another record was
    /// kept under the operation's key; a checkpoint files it under its own).
    @Test("regression: a record that cannot apply to the state is refused, not trapped on or kept",
          arguments: [("compaction-replaces-with-another-record.journal", UInt64(4)),
                      ("acknowledgement-row-of-another-record.journal", UInt64(11))])
    func inconsistentRecordIsRefused(_ name: String, _ sequence: UInt64) async throws {
        let input = FuzzJournalReader.withChecksumsFixed(try Self.bytes("journals/fuzz-regressions/journal-reader/" + name))
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let path = directory.file("found.journal")
        try Data(input).write(to: URL(fileURLWithPath: path))
        do {
            _ = try Replayer.replay(path: path)
            Issue.record("\(name) replayed")
        } catch let failure as Replayer.Failure {
            guard case .inconsistent(let at, _) = failure else {
                Issue.record("\(name): \(failure)")
                return
            }
            #expect(at == sequence)
        }
        // A store on it opens unreadable and leaves the file as it was.
        let store = try await LocalStore.open(path: path)
        guard case .unreadable(.corrupt(let offset, let detail)) = await store.status else {
            Issue.record("\(name): the store opened \(await store.status)")
            return
        }
        #expect(offset == nil, "every record verifies; together they do not make a store")
        #expect(detail.contains("does not apply to the state before it"))
        try await store.close()
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == input)
    }

    /// A header naming first sequence 2^64 − 1 was accepted; a store opened
    /// on it trapped on overflow when it counted on (a checkpoint's
    /// `sequence += 1`). A header's first sequence is now at most 2^63 − 1.
    @Test("regression: a header whose first sequence leaves no room to count on is corrupt")
    func firstSequenceAtTheEndOfUInt64() async throws {
        let input = FuzzJournalReader.withChecksumsFixed(try Self.bytes("journals/fuzz-regressions/journal-reader/first-sequence-at-the-end-of-uint64.journal"))
        #expect(throws: JournalHeader.Problem.invalidField("first sequence \(UInt64.max)")) {
            try JournalHeader.decode(Array(input.prefix(JournalFormat.headerLength)))
        }
        let largest = JournalHeader(journalID: .random(), generation: 7, firstSequence: JournalFormat.maximumFirstSequence, createdAtMilliseconds: 0)
        #expect(try JournalHeader.decode(largest.encoded()).firstSequence == JournalFormat.maximumFirstSequence)

        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let path = directory.file("found.journal")
        try Data(input).write(to: URL(fileURLWithPath: path))
        #expect(try JournalReader(path: path).scan().status.damageOffset == 0)
        let store = try await LocalStore.open(path: path)
        guard case .unreadable = await store.status else {
            Issue.record("the store opened \(await store.status)")
            return
        }
        try await store.close()
    }

    /// The replies the server-reply fuzzer found: a resync page with one id
    /// twice was accepted (a normal pull refused it), and one with an invalid
    /// row was refused only after the last page (or, when a later page failed
    /// transiently, turned into "retry later"). `SyncEngine.validate` now
    /// refuses both as the page arrives.
    @Test("regression: a malformed resync page is refused as it arrives",
          arguments: [("resync-page-with-one-id-twice.bin", "row \"p1\" twice in one page"),
                      ("resync-page-with-an-empty-id.bin", "missing or empty id"),
                      ("resync-page-with-an-empty-id-then-503.bin", "missing or empty id")])
    func malformedResyncPageIsRefused(_ name: String, _ reason: String) async throws {
        let input = try Self.bytes("journals/fuzz-regressions/server-reply/" + name)
        let lines = TraceLines()
        try await FuzzServerReply.run(input, trace: { lines.append($0) })
        let trace = lines.all
        let first = try #require(trace.firstIndex { $0.contains("round 0: sync") }, "\(trace)")
        #expect(trace[first].contains("sync error: malformed pull reply") && trace[first].contains(reason), "\(trace)")
        // The malformed page was the last request of that sync.
        #expect(trace[first - 1].contains("[malformed:"), "\(trace)")
    }

    /// A torn record whose payload runs past the end of the file carries, in
    /// the part that reached the disk, a complete frame of this generation
    /// claiming a horizon past the cut. The classification steps over the
    /// torn record (its header verified, so its extent is the writer's) and
    /// finds a torn tail; the search for records after the damage must step
    /// over it too, or salvage keeps a frame that was never a record.
    @Test("a frame inside the payload of a record the file ends in is never a record after the damage")
    func frameInsideATruncatedPayload() throws {
        let healthyPath = Self.root.appendingPathComponent("journals/samples/healthy.journal").path
        let healthy = try Self.bytes("journals/samples/healthy.journal")
        let header = try #require(try JournalReader(path: healthyPath).header())
        let end = Int64(healthy.count)
        let inner = RecordFrame.encode(type: .operation, generation: header.generation, sequence: 8, horizon: end + 40,
                                       payload: Array("inside a payload".utf8))
        let outer = RecordFrame.encode(type: .operation, generation: header.generation, sequence: 7, horizon: end,
                                       payload: Array(repeating: 0x2E, count: 40) + inner + Array(repeating: 0x2E, count: 1200))
        let input = healthy + outer.prefix(40 + 40 + inner.count + 100)
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let path = directory.file("torn.journal")
        try Data(input).write(to: URL(fileURLWithPath: path))
        let reader = JournalReader(path: path)
        guard case .tornTail(let offset, .incompletePayload) = try reader.scan().status else {
            Issue.record("not a torn tail: \(try reader.scan().status)")
            return
        }
        #expect(offset == end)
        #expect(try reader.recordsAfterDamage().isEmpty)
        try FuzzJournalReader.run(input)
    }

    // MARK: The harness itself

    @Test("the reply script's rules see a malformed reply, and the engine refuses it")
    func malformedSeedsAreSeenAndRefused() async throws {
        for name in ["malformed-push-missing-result", "malformed-pull-repeated-row"] {
            let seed = try #require(FuzzServerReply.seeds.first { $0.name == name })
            let lines = TraceLines()
            try await FuzzServerReply.run(seed.bytes, trace: { lines.append($0) })
            let trace = lines.all
            #expect(trace.contains { $0.contains("[malformed:") }, "\(name): \(trace)")
            #expect(trace.contains { $0.contains("sync error: malformed") }, "\(name): \(trace)")
        }
    }

    @Test("the well-formed seeds end ok and none of their replies is malformed")
    func wellFormedSeedsEndOK() async throws {
        for seed in FuzzServerReply.seeds where !seed.name.hasPrefix("malformed") {
            let lines = TraceLines()
            try await FuzzServerReply.run(seed.bytes, trace: { lines.append($0) })
            let trace = lines.all
            #expect(!trace.contains { $0.contains("[malformed:") }, "\(seed.name): \(trace)")
            #expect(trace.last?.contains("sync ok") == true, "\(seed.name): \(trace)")
        }
    }

    @Test("checksum fixing frames the header and the records and leaves a healthy journal as it is")
    func checksumFixing() throws {
        let healthy = try Self.bytes("journals/samples/healthy.journal")
        #expect(FuzzJournalReader.withChecksumsFixed(healthy) == healthy)
        var flipped = healthy
        flipped[100] ^= 0x01                      // inside record 1's payload
        let fixed = FuzzJournalReader.withChecksumsFixed(flipped)
        #expect(fixed != flipped)
        #expect(Array(fixed[100...]) != Array(healthy[100...]))
        #expect(FuzzJournalReader.withChecksumsFixed([1, 2, 3]) == [1, 2, 3])
    }

    @Test("the fuzz input reads zeros once exhausted, so any input is a whole script")
    func fuzzInputExhausts() {
        var input = FuzzInput([7, 0x81])
        let first = input.int(below: 4)
        let second = input.bool()
        #expect(first == 3 && second)
        #expect(input.isExhausted)
        let after = (input.byte(), input.int64(), input.string(["a"]), input.fields())
        #expect(after.0 == 0 && after.1 == 0 && after.2 == "a" && after.3.isEmpty)
    }

    @Test("the regression runner: files and directories, findings, usage errors")
    func regressionRunner() async throws {
        let output = CapturedOutput()
        let seeds = Self.root.appendingPathComponent("journals/samples").path
        // The runner blocks its thread until each input's async run ends, as
        // the command-line tool does; on a thread of the concurrency pool that
        // would hold one of the threads the run itself needs.
        let runner: @Sendable (FuzzTarget, [String]) async -> Int32 = { target, arguments in
            await onThreadOfItsOwn { FuzzRegressionRunner.run(target, arguments: arguments, output: output.output) }
        }
        #expect(await runner(.journalReader, [seeds]) == 0)
        #expect(output.standard.contains("11 inputs, 0 findings"))
        #expect(await runner(.journalReader, []) == 64)
        #expect(await runner(.serverReply, ["--bogus"]) == 64)
        #expect(await runner(.serverReply, ["/nonexistent/input"]) == 66)

        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let seedDirectory = directory.file("seeds")
        #expect(await runner(.serverReply, ["--make-seeds", seedDirectory, seedDirectory]) == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: seedDirectory).count == FuzzServerReply.seeds.count)
    }
}

/// Lines handed to a trace from the harness's tasks.
final class TraceLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

import SyncJournalCore
import SyncJournalTesting
import Testing

/// Torn-tail side files: only the non-zero bytes of the cut tail, with their
/// offsets, readable back into the tail; and a bounded number per journal.
@Suite("Torn-tail side files")
struct TornTailFileTests {
    static let sector = JournalFormat.sectorSize

    /// A durable journal of three edits, then a torn batch (its first
    /// record's first sectors lost, later records present) and 1 MiB of
    /// preallocated zeros. Returns the bytes and the offset of the cut.
    static func tornJournal(_ path: String) async throws -> (bytes: [UInt8], cut: Int) {
        let records = try await SampleJournal.write(SampleJournal.payloads(3), to: path, mode: .durable)
        let end = Int(records.last!.offset) + records.last!.length
        var bytes = Array(try FileBytes.read(path)[..<end])
        let big = [UInt8](repeating: 0x61, count: 1500) + [UInt8](repeating: 0, count: 40) + [UInt8](repeating: 0x62, count: 9)
        var batch: [UInt8] = []
        for (index, payload) in [big, Array("second".utf8), Array("third".utf8)].enumerated() {
            RecordFrame.encode(type: RecordType(rawValue: 1), generation: SampleJournal.generation,
                               sequence: 4 + UInt64(index), horizon: Int64(end), payload: payload, into: &batch)
        }
        bytes += batch
        let firstEnd = end + JournalFormat.recordHeaderLength + big.count
        for i in end..<(firstEnd / sector * sector) { bytes[i] = 0 }
        bytes += [UInt8](repeating: 0, count: 1 << 20)
        try FileBytes.write(bytes, to: path)
        return (bytes, end)
    }

    @Test("A repair's side file holds exactly the non-zero runs of the cut tail, each at its offset, and reading it back rebuilds the tail byte for byte")
    func sideFileHoldsTheNonZeroRunsAndRebuildsTheTail() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("torn.journal")
            let (bytes, cut) = try await Self.tornJournal(path)
            #expect(try JournalReader(path: path).scan().status.damageOffset == Int64(cut))
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options())
            try await writer.close()
            let sidePath = try #require(writer.recovery.sideFile)
            let side = try TornTailFile.read(path: sidePath)
            let tail = Array(bytes[cut...])

            #expect(side.cutOffset == Int64(cut))
            #expect(side.tailLength == Int64(tail.count))
            #expect(side.tailBytes() == tail)
            // Exactly the runs: each starts and ends with a non-zero byte, a
            // gap of 16 zeros or more separates two runs, fewer never does,
            // and every byte outside them is zero.
            var covered = [Bool](repeating: false, count: tail.count)
            var previousEnd: Int?
            for run in side.runs {
                let from = Int(run.offset) - cut
                #expect(run.bytes == Array(tail[from..<(from + run.bytes.count)]))
                #expect(run.bytes.first != 0 && run.bytes.last != 0)
                #expect(!run.bytes.indices.contains { i in i + 16 <= run.bytes.count && run.bytes[i..<(i + 16)].allSatisfy { $0 == 0 } })
                if let previousEnd { #expect(from - previousEnd >= TornTailFile.zeroGapEndingRun) }
                for i in from..<(from + run.bytes.count) { covered[i] = true }
                previousEnd = from + run.bytes.count
            }
            #expect(tail.indices.allSatisfy { covered[$0] || tail[$0] == 0 })
            // The 40 zeros inside the first payload split it: the torn record's tail, then the rest of the batch.
            #expect(side.runs.count == 2)
            #expect(try FileBytes.size(sidePath) < 4096)
        }
    }

    @Test("A side file with a changed byte or cut short does not read as one")
    func damagedSideFileIsRefused() throws {
        let file = TornTailFile(number: 3, cutOffset: 1000, tailLength: 600,
                                runs: [.init(offset: 1010, bytes: [1, 2, 3]), .init(offset: 1300, bytes: [9, 0, 9])])
        let bytes = file.encoded()
        #expect(try TornTailFile.decode(bytes) == file)
        var changed = bytes
        changed[TornTailFile.headerLength + 13] ^= 0x10
        #expect(throws: TornTailFile.Problem.checksumMismatch) { try TornTailFile.decode(changed) }
        #expect(throws: TornTailFile.Problem.self) { try TornTailFile.decode(Array(bytes.dropLast(5))) }
        #expect(throws: TornTailFile.Problem.notATornTailFile) { try TornTailFile.decode([1, 2, 3]) }
    }

    @Test("A journal keeps at most 8 side files: each repair numbers its side file after the newest, and the oldest, an unreadable one first, go only once newer complete ones replace them")
    func sideFilesAreBounded() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("bounded.journal")
            try await SampleJournal.write(SampleJournal.payloads(2), to: path, mode: .durable)
            // A side file from before this format: raw bytes, no number.
            let legacy = path + ".torn-1"
            try FileBytes.write([0xEE, 0xEE], to: legacy)
            func sideFiles() throws -> [String] {
                try directory.entries().filter { $0.hasPrefix("bounded.journal.torn-") }
            }
            var numbers: [UInt64] = []
            for repair in 1...10 {
                try FileBytes.append([UInt8](repeating: 0xEE, count: 20), to: path)
                let writer = try await JournalWriter.open(path: path, options: SampleJournal.options())
                try await writer.close()
                #expect(writer.recovery.bytesCut == 20)
                numbers.append(try TornTailFile.read(path: try #require(writer.recovery.sideFile)).number)
                let present = try sideFiles()
                #expect(present.count == min(repair + 1, TornTailFile.kept), "after repair \(repair): \(present)")
                #expect(FileBytes.exists(legacy) == (repair < TornTailFile.kept), "after repair \(repair)")
            }
            #expect(numbers == Array(1...10))
            let kept = try sideFiles().map { try TornTailFile.read(path: directory.file($0)).number }.sorted()
            #expect(kept == Array(3...10))
        }
    }
}

import SyncJournalCore
import SyncJournalTesting
import Testing

@Suite("Damage classification")
struct DamageClassificationTests {
    /// Record sequences that skip or repeat, with the number expected where they go wrong.
    static let sequenceCases: [(sequences: [UInt64], expected: UInt64)] = [
        ([1, 2, 4], 3), ([1, 2, 2], 3), ([1, 1], 2), ([2, 3], 1),
    ]

    @Test("A zero-filled tail is preallocated space: clean, kept by a writer that opens it, appended over, cut on close")
    func zeroFilledTailIsPreallocatedSpace() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("zeros.journal")
            let records = try await SampleJournal.write(SampleJournal.payloads(3), to: path)
            let valid = try FileBytes.read(path)
            try FileBytes.append([UInt8](repeating: 0, count: 4096), to: path)

            let (report, read) = try JournalReader(path: path).readAll()
            #expect(report.status == .clean)
            #expect(report.validBytes == Int64(valid.count))
            #expect(report.preallocatedBytes == 4096)
            #expect(read.filter { $0.type != .syncHorizon } == records)

            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options())
            #expect(writer.recovery.bytesCut == 0)
            #expect(writer.recovery.sideFile == nil)
            #expect(try FileBytes.read(path).count == valid.count + 4096)
            // Sequence 4 is the closing record of the first (bulk) writer.
            #expect(try await writer.append(type: RecordType(rawValue: 1), payload: [4]) == 5)
            // The append went into the zeros: the file did not grow.
            #expect(try FileBytes.read(path).count == valid.count + 4096)
            try await writer.close()
            let after = try JournalReader(path: path).readAll()
            #expect(after.report.status == .clean)
            #expect(after.report.preallocatedBytes == 0)
            #expect(after.report.fileBytes == after.report.validBytes)
            // Each writer, bulk and durable, closed with a horizon record.
            #expect(after.records.map(\.sequence) == [1, 2, 3, 4, 5, 6])
            #expect(after.records.map(\.type).filter { $0 == .syncHorizon }.count == 2)
        }
    }

    @Test("Zeros over durable records, followed by a record whose horizon covers them, are corruption, not preallocated space")
    func zerosBeforeValidRecordAreCorrupt() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("hole.journal")
            let records = try await SampleJournal.write(SampleJournal.payloads(4), to: path)
            var bytes = try FileBytes.read(path)
            let start = Int(records[1].offset)
            let end = Int(records[2].offset)
            for i in start..<end { bytes[i] = 0 }
            try FileBytes.write(bytes, to: path)
            let report = try JournalReader(path: path).scan()
            // The writer's closing record claims everything before it durable.
            guard case .corrupt(let offset, .damageBehindHorizon(_, _, let horizon)) = report.status else {
                Issue.record("expected corruption, got \(report.status)")
                return
            }
            #expect(offset == Int64(start))
            #expect(horizon > Int64(start))
            #expect(report.preallocatedBytes == 0)
            await #expect(throws: JournalError.self) { _ = try await JournalWriter.open(path: path, options: SampleJournal.options()) }
            #expect(try FileBytes.read(path) == bytes)
        }
    }

    @Test("A record whose later sectors never reached the disk, inside preallocated space, is a torn tail, and the writer cuts it and the zeros after it")
    func tornRecordInPreallocatedSpace() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("torn-zeros.journal")
            let payloads = [[UInt8](repeating: 0x41, count: 700), [UInt8](repeating: 0x42, count: 700), [UInt8](repeating: 0x43, count: 1400)]
            let records = try await SampleJournal.write(payloads, to: path)
            var bytes = try FileBytes.read(path)
            // The last record's first sector reached the disk, the rest did
            // not (zeros), and 8 KiB of preallocated zeros follow.
            let sector = JournalFormat.sectorSize
            let keep = (Int(records[2].offset) / sector + 1) * sector
            bytes.removeLast(bytes.count - keep)
            bytes += [UInt8](repeating: 0, count: 8192)
            try FileBytes.write(bytes, to: path)
            let report = try JournalReader(path: path).scan()
            #expect(report.status.name == "torn-tail", "\(report.status)")
            #expect(report.status.damageOffset == records[2].offset)
            #expect(report.preallocatedBytes == 0)
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options())
            #expect(writer.recovery.bytesCut == Int64(bytes.count) - records[2].offset)
            try await writer.close()
            #expect(try JournalReader(path: path).readAll().records.filter { $0.type != .syncHorizon }.count == 2)
        }
    }

    @Test("An impossible length in a record header that verifies is corruption, never allocated",
          arguments: [UInt32(0xFFFF_FFF0), UInt32(0xFFFF_FFFF), UInt32(JournalFormat.maximumPayloadLength + 1)])
    func impossibleLengthIsDamage(length: UInt32) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("length.journal")
            let records = try await SampleJournal.write(SampleJournal.payloads(4), to: path)
            let original = try FileBytes.read(path)
            for damaged in [1, 3] {
                var bytes = original
                FileBytes.patchUInt32(&bytes, at: Int(records[damaged].offset) + 8, length)
                FileBytes.resealRecordHeader(&bytes, at: Int(records[damaged].offset))
                try FileBytes.write(bytes, to: path)
                let result = try JournalReader(path: path).readAll()
                #expect(result.report.status == .corrupt(offset: records[damaged].offset, damage: .impossibleLength(length)))
                #expect(result.records == Array(records.prefix(damaged)))
            }
        }
    }

    @Test("A verified length larger than the bytes left in the file is an incomplete payload, and the writer cuts it")
    func lengthPastTheEndIsTorn() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("past-end.journal")
            let records = try await SampleJournal.write(SampleJournal.payloads(3), to: path)
            var bytes = try FileBytes.read(path)
            let remaining = bytes.count - Int(records[2].offset) - JournalFormat.recordHeaderLength
            FileBytes.patchUInt32(&bytes, at: Int(records[2].offset) + 8, UInt32(remaining + 1))
            FileBytes.resealRecordHeader(&bytes, at: Int(records[2].offset))
            try FileBytes.write(bytes, to: path)
            let (report, read) = try JournalReader(path: path).readAll()
            #expect(report.status == .tornTail(offset: records[2].offset,
                                               damage: .incompletePayload(declared: UInt32(remaining + 1), available: remaining)))
            #expect(read == Array(records.prefix(2)))
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options())
            #expect(writer.recovery.bytesCut == Int64(bytes.count) - records[2].offset)
            #expect(writer.nextSequence == 3)
            try await writer.close()
        }
    }

    @Test("A damaged middle record makes the journal corrupt; opening for writing fails naming the offset and changes nothing")
    func corruptMiddleIsRefusedUntouched() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("corrupt.journal")
            let records = try await SampleJournal.write(SampleJournal.payloads(4), to: path)
            var bytes = try FileBytes.read(path)
            bytes[Int(records[1].offset) + JournalFormat.recordHeaderLength + 2] ^= 0x20
            try FileBytes.write(bytes, to: path)
            let entriesBefore = try directory.entries()

            let (report, read) = try JournalReader(path: path).readAll()
            #expect(report.status.name == "corrupt")
            #expect(report.status.damageOffset == records[1].offset)
            #expect(read == Array(records.prefix(1)))

            for _ in 0..<2 {  // twice: a failed open must also release the lock
                await #expect(throws: JournalError.corrupt(path: path, offset: records[1].offset, damage: report.status.damage!)) {
                    try await JournalWriter.open(path: path, options: SampleJournal.options())
                }
            }
            #expect(try FileBytes.read(path) == bytes)
            #expect(try directory.entries().filter { $0.contains(".torn-") }.isEmpty)
            #expect(try directory.entries().filter { $0 != "corrupt.journal.lock" } == entriesBefore.filter { $0 != "corrupt.journal.lock" })
        }
    }

    @Test("Valid records whose sequence skips or repeats a number make the journal corrupt at that record",
          arguments: sequenceCases)
    func sequenceGapOrRepeatIsCorrupt(sequences: [UInt64], expected: UInt64) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("sequence.journal")
            let frames = sequences.map { (sequence: $0, generation: SampleJournal.generation, payload: Array("seq \($0)".utf8)) }
            let bytes = SampleJournal.crafted(frames: frames)
            try FileBytes.write(bytes, to: path)
            let bad = sequences.indices.first { sequences[$0] != UInt64($0) + 1 }!
            var offset = Int64(JournalFormat.headerLength)
            for frame in frames.prefix(bad) { offset += Int64(JournalFormat.recordHeaderLength + frame.payload.count) }

            let (report, read) = try JournalReader(path: path).readAll()
            #expect(report.status == .corrupt(offset: offset, damage: .sequenceMismatch(expected: expected, found: sequences[bad])))
            #expect(read.map(\.sequence) == Array(sequences.prefix(bad)))
            await #expect(throws: JournalError.corrupt(path: path, offset: offset,
                                                      damage: .sequenceMismatch(expected: expected, found: sequences[bad]))) {
                try await JournalWriter.open(path: path, options: SampleJournal.options())
            }
            #expect(try FileBytes.read(path) == bytes)
        }
    }

    @Test("A journal starting at sequence 10 reads its records from 10 and refuses a first record numbered 11")
    func firstSequenceComesFromTheHeader() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("first.journal")
            let header = SampleJournal.header(firstSequence: 10)
            let good = SampleJournal.crafted(header: header, frames: [(10, SampleJournal.generation, [1]), (11, SampleJournal.generation, [2])])
            try FileBytes.write(good, to: path)
            let read = try JournalReader(path: path).readAll()
            #expect(read.report.status == .clean)
            #expect(read.records.map(\.sequence) == [10, 11])
            #expect(read.report.nextSequence == 12)

            let bad = SampleJournal.crafted(header: header, frames: [(11, SampleJournal.generation, [1])])
            try FileBytes.write(bad, to: path)
            let report = try JournalReader(path: path).scan()
            #expect(report.status == .corrupt(offset: 80, damage: .sequenceMismatch(expected: 10, found: 11)))
        }
    }

    @Test("Records of another generation after the valid ones are corruption: no interrupted append writes them, so the writer refuses and cuts nothing")
    func staleGenerationIsCorrupt() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("generation.journal")
            let records = try await SampleJournal.write(SampleJournal.payloads(3), to: path)
            let valid = try FileBytes.read(path)
            // Stale frames carry exactly the sequence numbers that come next.
            var stale: [UInt8] = []
            for sequence in UInt64(4)...6 {
                RecordFrame.encode(type: RecordType(rawValue: 1), generation: SampleJournal.otherGeneration,
                                   sequence: sequence, horizon: 80, payload: Array("stale \(sequence)".utf8), into: &stale)
            }
            try FileBytes.append(stale, to: path)

            let (report, read) = try JournalReader(path: path).readAll()
            #expect(report.status == .corrupt(offset: Int64(valid.count), damage: .foreignGeneration(SampleJournal.otherGeneration)))
            #expect(read.filter { $0.type != .syncHorizon } == records)
            await #expect(throws: JournalError.corrupt(path: path, offset: Int64(valid.count),
                                                       damage: .foreignGeneration(SampleJournal.otherGeneration))) {
                _ = try await JournalWriter.open(path: path, options: SampleJournal.options())
            }
            #expect(try FileBytes.read(path) == valid + stale)
        }
    }

    @Test("A file whose every record belongs to another generation is corrupt right after the header and left untouched")
    func foreignRecordsRightAfterTheHeader() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("foreign.journal")
            let bytes = SampleJournal.crafted(frames: [(1, SampleJournal.otherGeneration, [1]), (2, SampleJournal.otherGeneration, [2])])
            try FileBytes.write(bytes, to: path)
            let (report, read) = try JournalReader(path: path).readAll()
            #expect(report.status == .corrupt(offset: 80, damage: .foreignGeneration(SampleJournal.otherGeneration)))
            #expect(read.isEmpty)
            await #expect(throws: JournalError.self) { _ = try await JournalWriter.open(path: path, options: SampleJournal.options()) }
            #expect(try FileBytes.read(path) == bytes)
        }
    }
}

import SyncJournalCore
import SyncJournalTesting
import Testing

/// Format 2's recovery rule, one crafted file per clause: what a power cut
/// can leave opens and is cut; what it cannot is corrupt and left alone; what
/// a newer version wrote is read-only.
@Suite("Format 2 recovery")
struct Format2RecoveryTests {
    static let sector = JournalFormat.sectorSize

    /// A journal of `count` durable edits, without the writer's closing
    /// record: the state a crash leaves right after the last edit was
    /// acknowledged. Returns its bytes and records.
    static func durableJournal(_ path: String, count: Int = 3) async throws -> (bytes: [UInt8], records: [JournalRecord]) {
        let records = try await SampleJournal.write(SampleJournal.payloads(count), to: path, mode: .durable)
        let end = Int(records.last!.offset) + records.last!.length
        let bytes = Array(try FileBytes.read(path)[..<end])
        try FileBytes.write(bytes, to: path)
        return (bytes, records)
    }

    /// Frames of one group-commit batch appended at `end`: every record
    /// claims `end` as its horizon, as a batch written after the sync that
    /// made `end` durable does.
    static func batch(at end: Int, firstSequence: UInt64, payloads: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        for (index, payload) in payloads.enumerated() {
            RecordFrame.encode(type: RecordType(rawValue: 1), generation: SampleJournal.generation,
                               sequence: firstSequence + UInt64(index), horizon: Int64(end), payload: payload, into: &bytes)
        }
        return bytes
    }

    @Test("Zeros where a batch's first sectors never reached the disk, then later records of that batch: a torn tail, and the writer cuts it and keeps every acknowledged record")
    func lostSectorsBeforeLaterRecordsAreTorn() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("lost.journal")
            let (durable, records) = try await Self.durableJournal(path)
            let big = [UInt8](repeating: 0x61, count: 1500)
            let pending = Self.batch(at: durable.count, firstSequence: 4, payloads: [big, Array("second".utf8), Array("third".utf8)])
            var bytes = durable + pending
            // Every sector of the batch's first record after the durable end is lost.
            let firstEnd = durable.count + JournalFormat.recordHeaderLength + big.count
            for i in durable.count..<(firstEnd / Self.sector * Self.sector) { bytes[i] = 0 }
            try FileBytes.write(bytes, to: path)

            let (report, read) = try JournalReader(path: path).readAll()
            #expect(report.status.name == "torn-tail", "\(report.status)")
            #expect(report.status.damageOffset == Int64(durable.count))
            #expect(read == records)

            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options())
            #expect(writer.recovery.bytesCut == Int64(pending.count))
            #expect(try TornTailFile.read(path: writer.recovery.sideFile!).tailBytes() == Array(bytes[durable.count...]))
            #expect(try await writer.append(type: RecordType(rawValue: 1), payload: [9]) == 4)
            try await writer.close()
            #expect(try JournalReader(path: path).readAll().records.prefix(3) == records[...])
        }
    }

    @Test("A record header that crosses into a lost sector with only zero bytes there still verifies, and the lost payload sector makes it a torn tail, not corruption")
    func headerVerifiedAcrossALostSectorIsTorn() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("across.journal")
            // One synced record ending at 478, so the next header's last six
            // bytes (its horizon's high bytes, zero) fall into the next sector.
            var bytes = SampleJournal.crafted(frames: [(1, SampleJournal.generation, [UInt8](repeating: 0x31, count: 358))])
            #expect(bytes.count == 478)
            let end = bytes.count
            bytes += Self.batch(at: end, firstSequence: 2, payloads: [[UInt8](repeating: 0x78, count: 600)])
            // Sector 1 never reached the disk: it reads as zeros.
            for i in 512..<1024 { bytes[i] = 0 }
            try FileBytes.write(bytes, to: path)
            let report = try JournalReader(path: path).scan()
            #expect(report.status == .tornTail(offset: Int64(end), damage: .checksumMismatch))
            #expect(report.recordCount == 1)
        }
    }

    @Test("A record after the damage whose horizon lies past it proves the damaged bytes were durable: corruption, and the file is left as it was")
    func damageBehindALaterHorizonIsCorrupt() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("behind.journal")
            let (durable, records) = try await Self.durableJournal(path, count: 4)
            var bytes = durable
            // Zero the whole second record: zeros, as a power cut leaves, but
            // record 3 was written after record 2 was durable.
            for i in Int(records[1].offset)..<Int(records[2].offset) { bytes[i] = 0 }
            try FileBytes.write(bytes, to: path)
            let report = try JournalReader(path: path).scan()
            guard case .corrupt(let offset, .damageBehindHorizon(_, let at, let horizon)) = report.status else {
                Issue.record("expected damage behind a horizon, got \(report.status)")
                return
            }
            #expect(offset == records[1].offset)
            #expect(at == records[2].offset)
            #expect(horizon == records[2].offset)
            await #expect(throws: JournalError.corrupt(path: path, offset: offset, damage: report.status.damage!)) {
                _ = try await JournalWriter.open(path: path, options: SampleJournal.options())
            }
            #expect(try FileBytes.read(path) == bytes)
        }
    }

    @Test("0xFF over the last three durable records is corruption: no sector of them holds zeros, so no interrupted append left them")
    func fillOverTheLastRecordsIsCorrupt() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("ff.journal")
            let (durable, records) = try await Self.durableJournal(path, count: 5)
            var bytes = durable
            for i in Int(records[2].offset)..<bytes.count { bytes[i] = 0xFF }
            try FileBytes.write(bytes, to: path)
            let report = try JournalReader(path: path).scan()
            #expect(report.status.name == "corrupt", "\(report.status)")
            #expect(report.status.damageOffset == records[2].offset)
            await #expect(throws: JournalError.self) { _ = try await JournalWriter.open(path: path, options: SampleJournal.options()) }
            #expect(try FileBytes.read(path) == bytes)
        }
    }

    @Test("A frame inside a torn record's payload is never taken for a record after the damage, even one claiming a later horizon")
    func embeddedFrameIsNotARecord() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("embedded.journal")
            let (durable, records) = try await Self.durableJournal(path)
            let inner = RecordFrame.encode(type: RecordType(rawValue: 1), generation: SampleJournal.generation, sequence: 5,
                                           horizon: Int64(durable.count + 40), payload: Array("inside".utf8))
            let payload = [UInt8](repeating: 0x2E, count: 40) + inner + [UInt8](repeating: 0x2E, count: 1200)
            var bytes = durable + Self.batch(at: durable.count, firstSequence: 4, payloads: [payload])
            // The payload's last whole sector never reached the disk.
            let lost = (bytes.count / Self.sector - 1) * Self.sector
            for i in lost..<(lost + Self.sector) { bytes[i] = 0 }
            try FileBytes.write(bytes, to: path)

            let (report, read) = try JournalReader(path: path).readAll()
            #expect(report.status == .tornTail(offset: Int64(durable.count), damage: .checksumMismatch))
            #expect(read == records)
            #expect(try JournalReader(path: path).recordsAfterDamage().isEmpty)
        }
    }

    @Test("A single flipped bit in the payload of the last durable record is corruption naming the bit; beside a sector of zeros it reads torn, since that sector could be unwritten",
          arguments: [false, true])
    func flippedBitInTheLastRecord(besideZeroSector: Bool) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("flip.journal")
            let middle = [UInt8](repeating: besideZeroSector ? 0 : 0x33, count: 1200)
            let records = try await SampleJournal.write([Array("first".utf8), Array("x".utf8) + middle + Array("end".utf8)],
                                                        to: path, mode: .durable)
            let end = Int(records[1].offset) + records[1].length
            var bytes = Array(try FileBytes.read(path)[..<end])
            let target = end - 2
            bytes[target] ^= 0x08
            try FileBytes.write(bytes, to: path)
            let report = try JournalReader(path: path).scan()
            if besideZeroSector {
                // The zero sector's bytes could have been anything a writer
                // wrote, so one bit that would make the checksum match proves nothing.
                #expect(report.status.name == "torn-tail", "\(report.status)")
                return
            }
            guard case .corrupt(_, .flippedBit(_, let byte, let bit)) = report.status else {
                Issue.record("expected a flipped bit, got \(report.status)")
                return
            }
            #expect(byte == Int64(target))
            #expect(bit == 3)
        }
    }

    @Test("A verified record with a non-zero reserved field, or of a type the reader may not skip, makes the journal read-only: reported, refused by the writer, never cut")
    func unsupportedRecordsMakeTheJournalReadOnly() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("newer.journal")
            let (durable, records) = try await Self.durableJournal(path)

            var reserved = Self.batch(at: durable.count, firstSequence: 4, payloads: [Array("newer".utf8)])
            FileBytes.patchUInt16(&reserved, at: 14, 1)
            FileBytes.resealRecordHeader(&reserved, at: 0)
            try FileBytes.write(durable + reserved + [0x77, 0x77], to: path)
            let (report, read) = try JournalReader(path: path).readAll()
            #expect(report.status == .unsupported(offset: Int64(durable.count), reason: .reservedField(value: 1, sequence: 4)))
            #expect(read == records)
            await #expect(throws: JournalError.unsupported(path: path, offset: Int64(durable.count), reason: .reservedField(value: 1, sequence: 4))) {
                _ = try await JournalWriter.open(path: path, options: SampleJournal.options())
            }
            #expect(try FileBytes.read(path) == durable + reserved + [0x77, 0x77])

            var unknown: [UInt8] = []
            RecordFrame.encode(type: RecordType(rawValue: 0x00F0), generation: SampleJournal.generation, sequence: 4,
                               horizon: Int64(durable.count), payload: [1, 2, 3], into: &unknown)
            try FileBytes.write(durable + unknown, to: path)
            let understands: @Sendable (RecordType) -> Bool = { $0.rawValue == 1 }
            let status = try JournalReader(path: path, understands: understands).scan().status
            #expect(status == .unsupported(offset: Int64(durable.count), reason: .recordType(0x00F0, sequence: 4)))
            var options = SampleJournal.options()
            options.understands = understands
            await #expect(throws: JournalError.self) { _ = try await JournalWriter.open(path: path, options: options) }
            #expect(try FileBytes.read(path) == durable + unknown)
            // A reader with no type knowledge of its own reads the same file as clean.
            #expect(try JournalReader(path: path).scan().status == .clean)
        }
    }

    @Test("A non-zero byte farther past the damage than the in-flight limit is corruption: no unsynced append reaches that far")
    func bytesBeyondTheInFlightLimitAreCorrupt() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("far.journal")
            let (durable, _) = try await Self.durableJournal(path)
            let limit = Int(JournalFormat.defaultInFlightLimit)
            // An interrupted append: a record's first sector reached the
            // disk, its others did not; zeros follow, then one byte that far.
            let record = Self.batch(at: durable.count, firstSequence: 4, payloads: [[UInt8](repeating: 0x5A, count: 3000)])
            let kept = (durable.count / Self.sector + 1) * Self.sector - durable.count + Self.sector
            let start = durable + record.prefix(kept)
            // The zeros up to the limit are a hole: the file system reads them as zeros.
            let end = durable.count + limit
            try FileBytes.write(start, to: path)
            try FileBytes.extend(path, to: end)
            #expect(try JournalReader(path: path).scan().status.name == "torn-tail")
            try FileBytes.extend(path, to: end, thenAppend: [1])
            let report = try JournalReader(path: path).scan()
            guard case .corrupt(let offset, .beyondInFlightLimit(_, let byte, _)) = report.status else {
                Issue.record("expected a byte beyond the in-flight limit, got \(report.status)")
                return
            }
            #expect(offset == Int64(durable.count))
            #expect(byte == Int64(end))
        }
    }

    @Test("The search for records after damage does work linear in the tail's size, even when every eighth offset names the journal's generation")
    func searchAfterDamageIsLinear() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("crafted.journal")
            let (durable, _) = try await Self.durableJournal(path)
            var work: [Int: Int] = [:]
            for megabytes in [1, 4] {
                // A damaged record, then a tail crafted against the search:
                // the generation at every eighth offset, and lengths that
                // would make a per-offset payload checksum cost megabytes.
                var tail = [UInt8](repeating: 0xAB, count: 40)
                var unit: [UInt8] = []
                for i in 0..<8 { unit.append(UInt8(truncatingIfNeeded: SampleJournal.generation >> UInt64(8 * i))) }
                while tail.count < megabytes << 20 { tail += unit }
                try FileBytes.write(durable + tail, to: path)
                let report = try JournalReader(path: path).scan()
                #expect(report.status.name == "corrupt" || report.status.name == "torn-tail")
                work[megabytes] = report.searchWork
                #expect(report.searchWork <= 16 * tail.count, "\(report.searchWork) for \(tail.count) bytes")
            }
            let ratio = Double(work[4]!) / Double(work[1]!)
            #expect(ratio > 3.5 && ratio < 4.5, "work grew \(ratio)x for 4x the bytes")
        }
    }

    @Test("A flipped bit in the header is header damage, the version included, and salvage rebuilds the header from the records' generation")
    func damagedHeaderIsSalvaged() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("header.journal")
            let records = try await SampleJournal.write(SampleJournal.payloads(4), to: path, mode: .durable)
            var bytes = try FileBytes.read(path)
            bytes[8] ^= 0x01  // major version 2 -> 3
            try FileBytes.write(bytes, to: path)
            #expect(try JournalReader(path: path).scan().status == .corrupt(offset: 0, damage: .header(.checksumMismatch)))
            await #expect(throws: JournalError.self) { _ = try await JournalWriter.open(path: path, options: SampleJournal.options()) }

            let rebuilt = try JournalSalvage.rebuildHeader(path: path)
            #expect(rebuilt?.generation == SampleJournal.generation)
            #expect(rebuilt?.firstSequence == 1)
            let destination = directory.file("salvaged.journal")
            let result = try await JournalSalvage.salvage(from: path, to: destination)
            #expect(result.headerRebuilt)
            #expect(result.sourceStatus == .clean)
            let (report, copied) = try JournalReader(path: destination).readAll()
            #expect(report.status == .clean)
            #expect(copied.filter { $0.type != .syncHorizon }.map(\.payload) == records.map(\.payload))
            #expect(try FileBytes.read(path) == bytes)
        }
    }

    @Test("A writer that opens a 1.x journal moves it to format 2 first, keeping its id, generation, sequence numbers and records; a checkpoint then starts a new generation")
    func version1JournalIsMovedToFormat2WhenOpened() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("old.journal")
            var options = SampleJournal.options()
            options.headerForNewJournal = {
                JournalHeader(journalID: JournalID(bytes: Array(1...16))!, generation: SampleJournal.generation,
                              firstSequence: 7, createdAtMilliseconds: 1_700_000_000_000, majorVersion: 1)
            }
            // Created by this open: it keeps the format it was asked for.
            var writer = try await JournalWriter.open(path: path, options: options)
            #expect(writer.header.majorVersion == 1)
            try await writer.append(type: RecordType(rawValue: 1), payload: [1])
            try await writer.append(type: RecordType(rawValue: 2), payload: [1, 2])
            try await writer.close()
            let before = try JournalReader(path: path).readAll()
            #expect(before.report.header?.majorVersion == 1)

            writer = try await JournalWriter.open(path: path, options: options)
            #expect(writer.header.majorVersion == 2)
            // Records 7 and 8, then the closing record of the replacement file at 9.
            #expect(writer.nextSequence == 10)
            #expect(!FileBytes.exists(JournalFiles(journal: path).checkpoint))
            let movedFile = try JournalReader(path: path).readAll()
            let closing = try #require(movedFile.records.last)
            #expect(closing.type == .syncHorizon && closing.sequence == 9 && closing.syncHorizon == closing.offset)
            let moved = (report: movedFile.report, records: Array(movedFile.records.dropLast()))
            #expect(moved.report.status == .clean)
            #expect(moved.report.header?.majorVersion == 2)
            #expect(moved.report.header?.journalID == before.report.header?.journalID)
            #expect(moved.report.header?.generation == SampleJournal.generation)
            #expect(moved.report.header?.continuesGeneration == 0)
            #expect(moved.report.header?.firstSequence == 7)
            #expect(moved.report.header?.createdAtMilliseconds == 1_700_000_000_000)
            #expect(moved.records.map(\.sequence) == before.records.map(\.sequence))
            #expect(moved.records.map(\.type) == before.records.map(\.type))
            #expect(moved.records.map(\.payload) == before.records.map(\.payload))
            #expect(moved.records.allSatisfy { $0.syncHorizon != nil && $0.length == JournalFormat.recordHeaderLength + $0.payload.count })

            #expect(try await writer.append(type: RecordType(rawValue: 1), payload: [3]) == 10)
            try await writer.rewrite(records: [(RecordType(rawValue: 1), [4])])
            try await writer.close()
            let checkpointed = try JournalReader(path: path).readAll()
            #expect(checkpointed.report.header?.majorVersion == 2)
            #expect(checkpointed.report.header?.continuesGeneration == SampleJournal.generation)
            #expect(checkpointed.records.filter { $0.type != .syncHorizon }.map(\.payload) == [[4]])
        }
    }

    @Test("With the move deferred, opening a 1.x journal leaves it byte for byte as it was until moveToCurrentFormat() moves it, keeping its records")
    func deferredMoveToFormat2() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("old.journal")
            var options = SampleJournal.options()
            options.headerForNewJournal = {
                JournalHeader(journalID: JournalID(bytes: Array(1...16))!, generation: SampleJournal.generation,
                              createdAtMilliseconds: 1_700_000_000_000, majorVersion: 1)
            }
            var writer = try await JournalWriter.open(path: path, options: options)
            try await writer.append(type: RecordType(rawValue: 1), payload: [1])
            try await writer.close()
            let bytes = try FileBytes.read(path)

            options.defersFormatMove = true
            writer = try await JournalWriter.open(path: path, options: options)
            #expect(writer.header.majorVersion == 1)
            #expect(try FileBytes.read(path) == bytes)
            try await writer.moveToCurrentFormat()
            #expect(writer.header.majorVersion == 2)
            // Record 1, then the moved file's closing record at 2.
            #expect(try await writer.append(type: RecordType(rawValue: 1), payload: [2]) == 3)
            try await writer.close()
            let (report, records) = try JournalReader(path: path).readAll()
            #expect(report.status == .clean && report.header?.majorVersion == 2)
            #expect(records.filter { $0.type != .syncHorizon }.map(\.payload) == [[1], [2]])
        }
    }

    @Test("Moving a 1.x journal to format 2 is crash-safe: when the rename fails the open fails, the 1.x file is byte for byte as it was and no temporary file is left")
    func failedMoveToFormat2LeavesTheOldJournal() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("old.journal")
            var options = SampleJournal.options()
            options.headerForNewJournal = {
                JournalHeader(journalID: JournalID(bytes: Array(1...16))!, generation: SampleJournal.generation,
                              createdAtMilliseconds: 1_700_000_000_000, majorVersion: 1)
            }
            let writer = try await JournalWriter.open(path: path, options: options)
            try await writer.append(type: RecordType(rawValue: 1), payload: [1])
            try await writer.close()
            let bytes = try FileBytes.read(path)

            let faults = FaultInjectingSystemCalls()
            faults.inject(.ioError, into: .rename)
            var failing = options
            failing.system = faults
            await #expect(throws: JournalError.self) { _ = try await JournalWriter.open(path: path, options: failing) }
            #expect(try FileBytes.read(path) == bytes)
            #expect(!FileBytes.exists(JournalFiles(journal: path).checkpoint))

            let reopened = try await JournalWriter.open(path: path, options: options)
            #expect(reopened.header.majorVersion == 2)
            try await reopened.close()
            #expect(try JournalReader(path: path).readAll().records.filter { $0.type != .syncHorizon }.map(\.payload) == [[1]])
        }
    }

    @Test("Bulk mode never has more than the in-flight limit written past the durable end: it syncs on its own, and every record's horizon is within the limit")
    func bulkModeRespectsTheInFlightLimit() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("bulk.journal")
            var options = SampleJournal.options(mode: .bulk)
            options.preallocationBytes = 0
            options.headerForNewJournal = {
                JournalHeader(journalID: JournalID(bytes: Array(1...16))!, generation: SampleJournal.generation,
                              createdAtMilliseconds: 1_700_000_000_000, inFlightLimit: JournalFormat.minimumInFlightLimit)
            }
            let writer = try await JournalWriter.open(path: path, options: options)
            let payload = [UInt8](repeating: 7, count: 1 << 20)
            for _ in 0..<40 { try await writer.append(type: RecordType(rawValue: 1), payload: payload) }
            try await writer.sync()
            // 40 MiB with a 32 MiB limit: at least one sync of its own before the one asked for.
            #expect(writer.syncCount >= 2)
            try await writer.close()
            let (report, read) = try JournalReader(path: path).readAll()
            #expect(report.status == .clean)
            #expect(read.count == 41)
            #expect(read.last?.type == .syncHorizon && read.last?.syncHorizon == read.last?.offset)
        }
    }
}

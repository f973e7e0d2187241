import SyncJournalCore
import SyncJournalTesting
import Testing

/// Format 1.x recovery: torn when no valid record of the generation starts
/// later, corrupt otherwise; the search stays linear on crafted tails, and a
/// frame inside the torn record's own payload is not evidence.
@Suite("Format 1.x recovery")
struct Format1RecoveryTests {
    static let sector = JournalFormat.sectorSize

    static func header() -> JournalHeader {
        JournalHeader(journalID: JournalID(bytes: Array(1...16))!, generation: SampleJournal.generation,
                      createdAtMilliseconds: 1_700_000_000_000, majorVersion: 1)
    }

    /// One 1.x frame of type `0x0001`.
    static func frame(sequence: UInt64, payload: [UInt8], generation: UInt64 = SampleJournal.generation) -> [UInt8] {
        var bytes: [UInt8] = []
        RecordFrame.encodeVersion1(type: RecordType(rawValue: 1), generation: generation, sequence: sequence, payload: payload, into: &bytes)
        return bytes
    }

    /// A 1.x journal of `count` small records: its bytes.
    static func journal(count: Int) -> [UInt8] {
        var bytes = header().encoded()
        for (index, payload) in SampleJournal.payloads(count).enumerated() {
            bytes += frame(sequence: UInt64(index + 1), payload: payload)
        }
        return bytes
    }

    static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        (0..<MemoryLayout<T>.size).map { UInt8(truncatingIfNeeded: value >> T(8 * $0)) }
    }

    /// A damaged record, then `size` bytes crafted against the search: a
    /// 28-byte header at every 28th offset naming the journal's generation, a
    /// valid type and a length reaching the end of the file, so that checking
    /// each candidate on its own would hash the rest of the tail every time.
    static func adversarialTail(size: Int) -> [UInt8] {
        var tail = [UInt8](repeating: 0xAB, count: 28)
        let unit = JournalFormat.version1RecordHeaderLength
        while tail.count + unit <= size {
            let remaining = size - tail.count - unit
            tail += littleEndian(UInt32(0x1234_5678)) + littleEndian(UInt32(min(remaining, JournalFormat.maximumPayloadLength)))
                + littleEndian(UInt16(1)) + littleEndian(UInt16(0)) + littleEndian(SampleJournal.generation) + littleEndian(UInt64(9))
        }
        return tail + [UInt8](repeating: 0xCD, count: size - tail.count)
    }

    @Test("The search after 1.x damage does work linear in the tail's size when every 28th offset names the generation and a length reaching the end of the file")
    func searchAfterDamageIsLinear() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("crafted.journal")
            let durable = Self.journal(count: 3)
            var work: [Int: Int] = [:]
            for megabytes in [1, 4] {
                let tail = Self.adversarialTail(size: megabytes << 20)
                try FileBytes.write(durable + tail, to: path)
                let report = try JournalReader(path: path).scan()
                #expect(report.status == .tornTail(offset: Int64(durable.count), damage: .impossibleLength(0xABAB_ABAB)))
                work[megabytes] = report.searchWork
                #expect(report.searchWork <= 8 * tail.count, "\(report.searchWork) for \(tail.count) bytes")
            }
            let ratio = Double(work[4]!) / Double(work[1]!)
            #expect(ratio > 3.5 && ratio < 4.5, "work grew \(ratio)x for 4x the bytes")
        }
    }

    @Test("A valid 1.x record hidden in a crafted tail makes the damage corrupt, naming the first valid record's offset")
    func validRecordInCraftedTailIsFound() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("hidden.journal")
            let durable = Self.journal(count: 3)
            var tail = Self.adversarialTail(size: 1 << 20)
            let hidden = Self.frame(sequence: 7, payload: Array("hidden".utf8))
            let at = 300_001
            tail.replaceSubrange(at..<(at + hidden.count), with: hidden)
            try FileBytes.write(durable + tail, to: path)
            let report = try JournalReader(path: path).scan()
            #expect(report.status == .corrupt(offset: Int64(durable.count),
                                              damage: .damageBeforeValidRecord(.impossibleLength(0xABAB_ABAB), validRecordAt: Int64(durable.count + at))))
            await #expect(throws: JournalError.self) { _ = try await JournalWriter.open(path: path, options: SampleJournal.options()) }
        }
    }

    /// Records 1–3, then record 4 whose payload holds a complete frame of
    /// this generation with sequence 5, then preallocated zeros. Returns the
    /// bytes, record 4's offset and end, and the embedded frame's offset.
    static func journalWithEmbeddedFrame() -> (bytes: [UInt8], recordAt: Int, recordEnd: Int, embeddedAt: Int) {
        var bytes = journal(count: 3)
        let recordAt = bytes.count
        let embedded = frame(sequence: 5, payload: Array("inside".utf8))
        let payload = [UInt8](repeating: 0x61, count: 700) + embedded + [UInt8](repeating: 0x62, count: 1300)
        bytes += frame(sequence: 4, payload: payload)
        let embeddedAt = recordAt + JournalFormat.version1RecordHeaderLength + 700
        let recordEnd = bytes.count
        bytes += [UInt8](repeating: 0, count: 8 * sector - bytes.count)
        return (bytes, recordAt, recordEnd, embeddedAt)
    }

    @Test("A torn 1.x append whose payload holds a frame of the next sequence number reads torn, and the writer cuts it keeping records 1 to 3")
    func tornAppendWithEmbeddedFrameIsTorn() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("embedded.journal")
            var (bytes, recordAt, recordEnd, embeddedAt) = Self.journalWithEmbeddedFrame()
            // The sector after the embedded frame never reached the disk.
            let lost = (embeddedAt / Self.sector + 1) * Self.sector
            #expect(lost + Self.sector < recordEnd)
            for i in lost..<(lost + Self.sector) { bytes[i] = 0 }
            try FileBytes.write(bytes, to: path)
            #expect(try JournalReader(path: path).scan().status == .tornTail(offset: Int64(recordAt), damage: .checksumMismatch))
            // The embedded frame verifies on its own, but it is payload of the
            // torn append: salvage and inspection find no record after the cut.
            #expect(try JournalReader(path: path).recordsAfterDamage().isEmpty)

            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options())
            #expect(writer.recovery.bytesCut == Int64(bytes.count - recordAt))
            // Cut first, then moved to format 2 with the records before the cut.
            #expect(writer.header.majorVersion == 2)
            try await writer.close()
            let (report, records) = try JournalReader(path: path).readAll()
            #expect(report.status == .clean)
            // The writer closed the moved journal with a horizon record.
            #expect(records.filter { $0.type != .syncHorizon }.map(\.sequence) == [1, 2, 3])
        }
    }

    @Test("A torn-looking 1.x record with a frame inside, followed by a valid record, is corrupt and names that record; salvage starts there, not at the frame inside")
    func tornLookingRecordBeforeValidRecordNamesTheRecordAfterIt() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("embedded-then-record.journal")
            var (bytes, recordAt, recordEnd, embeddedAt) = Self.journalWithEmbeddedFrame()
            let lost = (embeddedAt / Self.sector + 1) * Self.sector
            for i in lost..<(lost + Self.sector) { bytes[i] = 0 }
            let later = Self.frame(sequence: 5, payload: Array("after".utf8))
            bytes.replaceSubrange(recordEnd..<(recordEnd + later.count), with: later)
            try FileBytes.write(bytes, to: path)
            #expect(try JournalReader(path: path).scan().status
                == .corrupt(offset: Int64(recordAt), damage: .damageBeforeValidRecord(.checksumMismatch, validRecordAt: Int64(recordEnd))))
            #expect(try JournalReader(path: path).recordsAfterDamage().map(\.offset) == [Int64(recordEnd)])
        }
    }

    @Test("A complete 1.x record with a flipped payload bit and a frame inside stays corrupt: nothing shows an interrupted append")
    func completeRecordWithEmbeddedFrameIsCorrupt() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("flipped.journal")
            var (bytes, recordAt, recordEnd, embeddedAt) = Self.journalWithEmbeddedFrame()
            bytes = Array(bytes[..<recordEnd])
            bytes[recordAt + 100] ^= 0x04
            try FileBytes.write(bytes, to: path)
            #expect(try JournalReader(path: path).scan().status
                == .corrupt(offset: Int64(recordAt), damage: .damageBeforeValidRecord(.checksumMismatch, validRecordAt: Int64(embeddedAt))))
        }
    }

    @Test("A flipped length bit that stretches a durable 1.x record over the next one and into zeros stays corrupt")
    func flippedLengthBitOverLaterRecordIsCorrupt() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("length.journal")
            var bytes = Self.journal(count: 4)
            let third = Self.header().encoded().count + 2 * Self.frame(sequence: 1, payload: SampleJournal.payloads(1)[0]).count
            let fourth = third + Self.frame(sequence: 3, payload: SampleJournal.payloads(3)[2]).count
            bytes += [UInt8](repeating: 0, count: 4 * Self.sector)
            bytes[third + 5] ^= 0x04  // length + 1024: over record 4 and into the zeros
            try FileBytes.write(bytes, to: path)
            #expect(try JournalReader(path: path).scan().status
                == .corrupt(offset: Int64(third), damage: .damageBeforeValidRecord(.checksumMismatch, validRecordAt: Int64(fourth))))
        }
    }
}

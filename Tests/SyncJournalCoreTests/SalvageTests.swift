import SyncJournalCore
import SyncJournalTesting
import Testing

@Suite("Salvage")
struct SalvageTests {
    /// Six records with the payload of record 3 damaged.
    private static func corruptJournal(_ path: String) async throws -> (records: [JournalRecord], bytes: [UInt8]) {
        let records = try await SampleJournal.write(SampleJournal.payloads(6), to: path)
        var bytes = try FileBytes.read(path)
        bytes[Int(records[2].offset) + JournalFormat.recordHeaderLength] ^= 0x01
        try FileBytes.write(bytes, to: path)
        #expect(try JournalReader(path: path).scan().status.name == "corrupt")
        return (records, bytes)
    }

    @Test("Salvage copies the valid prefix into a new clean journal with the same sequences and leaves the original unchanged")
    func salvageCopiesThePrefix() async throws {
        try await withTemporaryDirectory { directory in
            let source = directory.file("broken.journal")
            let destination = directory.file("salvaged.journal")
            let (records, bytes) = try await Self.corruptJournal(source)

            let result = try await JournalSalvage.salvage(from: source, to: destination)
            #expect(result.prefixRecords == 2)
            #expect(result.recordsAfterDamage == 0)
            #expect(result.sourceStatus.damageOffset == records[2].offset)
            #expect(try FileBytes.read(source) == bytes)

            let (report, copied) = try JournalReader(path: destination).readAll()
            #expect(report.status == .clean)
            #expect(report.header == result.header)
            #expect(report.header?.journalID == SampleJournal.header().journalID)
            #expect(report.header?.generation != SampleJournal.generation)
            #expect(copied.map(\.sequence) == [1, 2])
            #expect(copied.map(\.type) == records.prefix(2).map(\.type))
            #expect(copied.map(\.payload) == records.prefix(2).map(\.payload))

            // The salvaged journal is an ordinary journal: it takes appends.
            let writer = try await JournalWriter.open(path: destination, options: SampleJournal.options())
            #expect(try await writer.append(type: RecordType(rawValue: 1), payload: [3]) == 3)
            try await writer.close()

            await #expect(throws: JournalError.alreadyExists(path: destination)) {
                try await JournalSalvage.salvage(from: source, to: destination)
            }
        }
    }

    @Test("Salvage with includeRecordsAfterDamage appends the later valid records wrapped as salvaged records")
    func salvageKeepsLaterRecordsWrapped() async throws {
        try await withTemporaryDirectory { directory in
            let source = directory.file("broken.journal")
            let destination = directory.file("salvaged.journal")
            let (records, bytes) = try await Self.corruptJournal(source)

            let result = try await JournalSalvage.salvage(from: source, to: destination, includeRecordsAfterDamage: true)
            #expect(result.prefixRecords == 2)
            // The three edits after the damage and the writer's closing record.
            #expect(result.recordsAfterDamage == 4)
            #expect(try FileBytes.read(source) == bytes)

            let (report, copied) = try JournalReader(path: destination).readAll()
            #expect(report.status == .clean)
            #expect(copied.map(\.sequence) == [1, 2, 3, 4, 5, 6])
            #expect(copied.prefix(2).map(\.payload) == records.prefix(2).map(\.payload))
            #expect(copied.dropFirst(2).allSatisfy { $0.type == .salvaged })
            for (wrapped, original) in zip(copied.dropFirst(2), records.dropFirst(3)) {
                var reader = ByteReader(wrapped.payload)
                #expect(try reader.readUInt64() == UInt64(original.offset))
                #expect(try reader.readUInt64() == original.sequence)
                #expect(try reader.readUInt16() == original.type.rawValue)
                #expect(try reader.readBytes() == original.payload)
                #expect(reader.isAtEnd)
            }
        }
    }
}

import SyncJournalCore
import SyncJournalTesting
import Testing

@Suite("Record round trip")
struct RecordRoundTripTests {
    @Test("Records of several types, empty and 1 MiB payloads come back with the same types, payloads and sequences 1...n")
    func recordsRoundTrip() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("roundtrip.journal")
            var random = SeededGenerator(seed: 7)
            let input: [(RecordType, [UInt8])] = [
                (RecordType(rawValue: 0x0001), Array("first".utf8)),
                (RecordType(rawValue: 0x0101), []),
                (RecordType(rawValue: 0x8F7E), [1, 2, 3]),           // skippable, unknown to everyone
                (RecordType(rawValue: 0x0F00), random.bytes(1 << 20)),
                (RecordType(rawValue: 0x0002), random.bytes(1)),
                (.salvaged, []),
                (RecordType(rawValue: 0x0001), random.bytes(4097)),
            ]
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options())
            #expect(writer.recovery.created)
            #expect(writer.nextSequence == 1)
            var returned: [UInt64] = []
            for (type, payload) in input { returned.append(try await writer.append(type: type, payload: payload)) }
            #expect(returned == Array(1...UInt64(input.count)))
            #expect(writer.nextSequence == UInt64(input.count) + 1)
            let end = writer.endOffset
            try await writer.close()

            let (report, all) = try JournalReader(path: path).readAll()
            // The writer closed with one horizon record after them.
            #expect(all.count == input.count + 1 && all.last?.type == .syncHorizon)
            let records = Array(all.prefix(input.count))
            #expect(report.status == .clean)
            #expect(report.header == SampleJournal.header())
            #expect(report.recordCount == input.count + 1)
            #expect(report.lastSequence == UInt64(input.count) + 1)
            #expect(report.validBytes == report.fileBytes)
            #expect(report.fileBytes == end + Int64(JournalFormat.recordHeaderLength))
            #expect(records.map(\.type) == input.map(\.0))
            #expect(records.map(\.payload.count) == input.map(\.1.count))
            for (index, record) in records.enumerated() where index < input.count {
                let same = record.payload == input[index].1
                #expect(same, "payload of record \(index + 1) differs")
            }
            #expect(records.map(\.sequence) == Array(1...UInt64(input.count)))
            var offset = Int64(JournalFormat.headerLength)
            for record in records {
                #expect(record.offset == offset)
                offset += Int64(record.length)
            }
            #expect(offset == end)
            #expect(report.recordsByType[RecordType(rawValue: 0x0001)] == 2)
        }
    }

    @Test("A payload over 16 MiB is refused before anything is written")
    func oversizedPayloadIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("large.journal")
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options())
            let size = JournalFormat.maximumPayloadLength + 1
            await #expect(throws: JournalError.recordTooLarge(bytes: size, maximum: JournalFormat.maximumPayloadLength)) {
                try await writer.append(type: RecordType(rawValue: 1), payload: [UInt8](repeating: 1, count: size))
            }
            #expect(writer.nextSequence == 1)
            #expect(try await writer.append(type: RecordType(rawValue: 1), payload: [9]) == 1)
            try await writer.close()
            let (report, records) = try JournalReader(path: path).readAll()
            #expect(report.status == .clean)
            #expect(records.filter { $0.type != .syncHorizon }.map(\.payload) == [[9]])
        }
    }
}

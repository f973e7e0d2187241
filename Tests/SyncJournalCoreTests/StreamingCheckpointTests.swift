import SyncJournalCore
import SyncJournalTesting
import Testing

/// A checkpoint's records go to the new file in chunks as they are made.
@Suite("Streaming checkpoint")
struct StreamingCheckpointTests {
    @Test("a checkpoint larger than one chunk reads back whole, in order, with gapless sequence numbers, and the journal goes on after it")
    func checkpointSpanningChunksReadsBack() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("streamed.journal")
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options())
            try await writer.append(type: RecordType(rawValue: 1), payload: [1])
            // Eleven records of 700 KB: several chunks, and records that straddle chunk ends.
            let payloads = (0..<11).map { n in [UInt8](repeating: UInt8(n), count: 700_000) }
            let written = try await writer.rewrite { (file) throws(JournalError) in
                for payload in payloads { try file.append(type: RecordType(rawValue: 1), payload: payload) }
            }
            #expect(written.records == payloads.count)
            try await writer.append(type: RecordType(rawValue: 1), payload: [2])
            try await writer.close()
            let (report, records) = try JournalReader(path: path).readAll()
            #expect(report.status == .clean)
            let data = records.filter { $0.type == RecordType(rawValue: 1) }
            #expect(data.map(\.payload) == payloads + [[2]])
            #expect(data.first?.sequence == written.firstSequence)
            #expect(zip(records, records.dropFirst()).allSatisfy { $0.sequence + 1 == $1.sequence })
        }
    }

    @Test("a record too large for the format, made while the checkpoint is written, leaves the old journal in use and no temporary file")
    func recordTooLargeLeavesTheOldJournal() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("refused.journal")
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options())
            try await writer.append(type: RecordType(rawValue: 1), payload: [1])
            let tooLarge = [UInt8](repeating: 0, count: JournalFormat.maximumPayloadLength + 1)
            await #expect(throws: JournalError.recordTooLarge(bytes: tooLarge.count, maximum: JournalFormat.maximumPayloadLength)) {
                try await writer.rewrite { (file) throws(JournalError) in
                    try file.append(type: RecordType(rawValue: 1), payload: [9])
                    try file.append(type: RecordType(rawValue: 1), payload: tooLarge)
                }
            }
            try await writer.append(type: RecordType(rawValue: 1), payload: [2])
            try await writer.close()
            let records = try JournalReader(path: path).readAll().records.filter { $0.type == RecordType(rawValue: 1) }
            #expect(records.map(\.payload) == [[1], [2]])
            #expect(!FileBytes.exists(JournalFiles(journal: path).checkpoint))
        }
    }
}

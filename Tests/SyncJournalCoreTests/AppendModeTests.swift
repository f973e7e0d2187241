import SyncJournalCore
import SyncJournalTesting
import Testing

@Suite("Append modes and reopening")
struct AppendModeTests {
    @Test("64 concurrent group-commit appends all succeed with distinct gapless sequences, each in the file with its payload")
    func groupCommitConcurrentAppends() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("group.journal")
            let faults = FaultInjectingSystemCalls()
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options(mode: .groupCommit, system: faults))
            let results = try await withThrowingTaskGroup(of: (UInt64, [UInt8]).self) { group in
                for task in 0..<64 {
                    group.addTask {
                        let payload = Array("task \(task)".utf8)
                        return (try await writer.append(type: RecordType(rawValue: 1), payload: payload), payload)
                    }
                }
                var results: [(UInt64, [UInt8])] = []
                for try await result in group { results.append(result) }
                return results
            }
            let sequences = results.map(\.0).sorted()
            #expect(sequences == Array(1...64))
            #expect(writer.nextSequence == 65)
            // Every append was durable when it returned: one sync at least, and
            // never more syncs than appends.
            let syncs = faults.callCount(.fdatasync, on: .path(path))
            #expect(syncs == writer.syncCount)
            #expect((1...64).contains(syncs))
            try await writer.close()

            let (report, records) = try JournalReader(path: path).readAll()
            #expect(report.status == .clean)
            #expect(records.filter { $0.type != .syncHorizon }.map(\.sequence) == Array(1...64))
            #expect(records.last?.type == .syncHorizon, "the writer closed with its horizon record")
            let bySequence = Dictionary(uniqueKeysWithValues: records.map { ($0.sequence, $0.payload) })
            for (sequence, payload) in results { #expect(bySequence[sequence] == payload) }
        }
    }

    @Test("Bulk appends do not sync; sync() makes them durable with one fdatasync, and the data is all there")
    func bulkAppendsThenSync() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("bulk.journal")
            let faults = FaultInjectingSystemCalls()
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options(mode: .bulk, system: faults))
            let payloads = SampleJournal.payloads(100)
            for (index, payload) in payloads.enumerated() {
                #expect(try await writer.append(type: RecordType(rawValue: 1), payload: payload) == UInt64(index + 1))
            }
            #expect(faults.callCount(.fdatasync) == 0)
            try await writer.sync()
            #expect(faults.callCount(.fdatasync, on: .path(path)) == 1)
            try await writer.sync()  // nothing new: no second sync
            #expect(faults.callCount(.fdatasync, on: .path(path)) == 1)
            let (report, records) = try JournalReader(path: path).readAll()
            #expect(report.status == .clean)
            #expect(records.map(\.payload) == payloads)
            try await writer.close()
            await #expect(throws: JournalError.closed(path: path)) {
                try await writer.append(type: RecordType(rawValue: 1), payload: [])
            }
        }
    }

    @Test("Open, append, close cycles keep the sequence gapless across reopenings")
    func reopenAndContinue() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("cycles.journal")
            var expected: [[UInt8]] = []
            var next: UInt64 = 1
            for cycle in 0..<5 {
                let writer = try await JournalWriter.open(path: path, options: SampleJournal.options())
                #expect(writer.recovery.created == (cycle == 0))
                #expect(writer.recovery.statusFound == .clean)
                #expect(writer.recovery.recordCount == Int(next - 1))
                #expect(writer.nextSequence == next)
                for payload in SampleJournal.payloads(3, prefix: "cycle \(cycle)") {
                    #expect(try await writer.append(type: RecordType(rawValue: 1), payload: payload) == next)
                    expected.append(payload)
                    next += 1
                }
                try await writer.close()
                // The closing record takes the next sequence number (or two).
                next = writer.nextSequence
            }
            let (report, records) = try JournalReader(path: path).readAll()
            #expect(report.status == .clean)
            // Every close ended with a horizon record, which the next writer appends after.
            #expect(records.map(\.sequence) == Array(1...(next - 1)))
            #expect(records.filter { $0.type != .syncHorizon }.map(\.payload) == expected)
            #expect(report.header?.generation == SampleJournal.generation)
        }
    }
}

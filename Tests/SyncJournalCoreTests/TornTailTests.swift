import SyncJournalCore
import SyncJournalTesting
import Testing

@Suite("Torn tail")
struct TornTailTests {
    @Test("A journal cut at every byte inside its last record reads as a torn tail there, and opening it repairs the cut and continues gapless")
    func tornAtEveryByteOfTheLastRecord() async throws {
        try await withTemporaryDirectory { directory in
            let originalPath = directory.file("original.journal")
            let records = try await SampleJournal.write(SampleJournal.payloads(3) + [Array("the last record, torn".utf8)], to: originalPath)
            let last = records[records.count - 1]
            let lastOffset = Int(last.offset)
            // Without the writer's closing record: the last edit ends the file, as after a crash.
            let original = Array(try FileBytes.read(originalPath)[..<(lastOffset + last.length)])

            // Cut exactly at the record boundary: a clean journal one record shorter.
            let boundaryPath = directory.file("boundary.journal")
            try FileBytes.write(Array(original[..<lastOffset]), to: boundaryPath)
            let boundary = try JournalReader(path: boundaryPath).readAll()
            #expect(boundary.report.status == .clean)
            #expect(boundary.records == Array(records.dropLast()))

            for cut in (lastOffset + 1)..<original.count {
                let path = directory.file("cut-\(cut).journal")
                let torn = Array(original[..<cut])
                try FileBytes.write(torn, to: path)

                let (report, read) = try JournalReader(path: path).readAll()
                let present = cut - lastOffset
                let expectedDamage: JournalDamage = present < JournalFormat.recordHeaderLength
                    ? .incompleteRecordHeader(available: present)
                    : .incompletePayload(declared: UInt32(last.payload.count), available: present - JournalFormat.recordHeaderLength)
                #expect(report.status == .tornTail(offset: last.offset, damage: expectedDamage), "cut at \(cut)")
                #expect(read == Array(records.dropLast()), "cut at \(cut)")
                #expect(report.nextSequence == last.sequence)

                let writer = try await JournalWriter.open(path: path, options: SampleJournal.options(mode: .bulk))
                #expect(writer.recovery.statusFound == report.status)
                #expect(writer.recovery.bytesCut == Int64(present), "cut at \(cut)")
                #expect(writer.recovery.recordCount == records.count - 1)
                let side = "\(path).torn-\(lastOffset)"
                #expect(writer.recovery.sideFile == side)
                #expect(try TornTailFile.read(path: side).tailBytes() == Array(torn[lastOffset...]), "cut at \(cut)")
                #expect(try FileBytes.size(path) == Int64(lastOffset))
                #expect(writer.nextSequence == last.sequence)

                let replacement = Array("replacement after cut \(cut)".utf8)
                #expect(try await writer.append(type: RecordType(rawValue: 1), payload: replacement) == last.sequence)
                try await writer.close()

                let (after, readAgain) = try JournalReader(path: path).readAll()
                let again = readAgain.filter { $0.type != .syncHorizon }
                #expect(after.status == .clean, "cut at \(cut)")
                #expect(again.map(\.sequence) == Array(1...last.sequence))
                #expect(again.map(\.payload) == records.dropLast().map(\.payload) + [replacement])
            }
        }
    }

    @Test("A torn tail repaired and appended to: the old bytes past the cut, if they reappear, never verify as records and are reported as corruption")
    func staleBytesPastTheCutNeverValidate() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("stale.journal")
            var random = SeededGenerator(seed: 99)
            let oldPayload = random.bytes(2000)
            let records = try await SampleJournal.write(SampleJournal.payloads(3) + [oldPayload], to: path)
            let original = try FileBytes.read(path)
            let tornOffset = Int(records[3].offset)
            let cut = tornOffset + JournalFormat.recordHeaderLength + 1000
            try FileBytes.write(Array(original[..<cut]), to: path)

            // Repair and append a much shorter record 4.
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options())
            #expect(writer.recovery.bytesCut == Int64(cut - tornOffset))
            let newPayload = Array("new record 4".utf8)
            #expect(try await writer.append(type: RecordType(rawValue: 1), payload: newPayload) == 4)
            try await writer.close()
            let closed = try FileBytes.read(path)
            let newEnd = closed.count

            // The torn record's bytes come back at their old offsets past the new
            // end (as if the synced cut had been undone): no crash leaves that,
            // so it is corruption, and the stale record never verifies.
            #expect(cut > newEnd)
            let resurrected = closed + original[newEnd..<cut]
            try FileBytes.write(resurrected, to: path)
            let (report, read) = try JournalReader(path: path).readAll()
            #expect(report.status.name == "corrupt", "\(report.status)")
            #expect(report.status.damageOffset == Int64(newEnd))
            #expect(read.filter { $0.type != .syncHorizon }.map(\.payload) == records.prefix(3).map(\.payload) + [newPayload])
            #expect(!read.contains { $0.payload == oldPayload })
            await #expect(throws: JournalError.self) { _ = try await JournalWriter.open(path: path, options: SampleJournal.options()) }
            #expect(try FileBytes.read(path) == resurrected)

            // The whole old record 4 placed after the new ones verifies but
            // carries sequence 4, a repeat: corrupt.
            let oldFrame = Array(original[tornOffset..<(tornOffset + records[3].length)])
            try FileBytes.write(closed + oldFrame, to: path)
            let repeated = try JournalReader(path: path).readAll()
            // The writer's closing record came after record 4.
            let expected = (repeated.records.last?.sequence ?? 0) + 1
            #expect(expected > 5)
            #expect(repeated.report.status == .corrupt(offset: Int64(newEnd), damage: .sequenceMismatch(expected: expected, found: 4)))
            #expect(repeated.records.filter { $0.type != .syncHorizon }.map(\.payload) == records.prefix(3).map(\.payload) + [newPayload])
        }
    }
}

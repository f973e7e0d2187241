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
                #expect(try FileBytes.read(side) == Array(torn[lastOffset...]), "cut at \(cut)")
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

    @Test("A torn tail repaired and appended to: the old bytes past the cut, if they reappear, never verify as records")
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
            let newEnd = Int(writer.endOffset)
            try await writer.close()

            // The torn record's bytes come back at their old offsets past the new
            // record (as if the truncation had been lost): they must not verify.
            var resurrected = try FileBytes.read(path)
            #expect(resurrected.count == newEnd)
            resurrected += original[newEnd..<cut]
            try FileBytes.write(resurrected, to: path)
            let (report, read) = try JournalReader(path: path).readAll()
            #expect(report.status.name == "torn-tail")
            #expect(report.status.damageOffset == Int64(newEnd))
            #expect(read.map(\.payload) == records.prefix(3).map(\.payload) + [newPayload])
            #expect(!read.contains { $0.payload == oldPayload })

            // The whole old record 4 placed after the new one still does not
            // verify as record 5: it carries sequence 4, a repeat.
            let oldFrame = Array(original[tornOffset..<(tornOffset + records[3].length)])
            try FileBytes.write(Array(resurrected[..<newEnd]) + oldFrame, to: path)
            let repeated = try JournalReader(path: path).readAll()
            #expect(repeated.report.status == .corrupt(offset: Int64(newEnd), damage: .sequenceMismatch(expected: 5, found: 4)))
            #expect(repeated.records.map(\.payload) == records.prefix(3).map(\.payload) + [newPayload])

            // Back to the resurrected fragment: reopening cuts it and appends continue.
            try FileBytes.write(resurrected, to: path)
            let again = try await JournalWriter.open(path: path, options: SampleJournal.options())
            #expect(again.recovery.bytesCut == Int64(cut - newEnd))
            #expect(try await again.append(type: RecordType(rawValue: 1), payload: Array("record 5".utf8)) == 5)
            try await again.close()
            let final = try JournalReader(path: path).readAll()
            #expect(final.report.status == .clean)
            #expect(final.records.map(\.sequence) == [1, 2, 3, 4, 5])
            #expect(final.records.map(\.payload) == records.prefix(3).map(\.payload) + [newPayload, Array("record 5".utf8)])
        }
    }
}

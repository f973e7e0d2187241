import SyncJournalCore
import SyncJournalPlatform
import SyncJournalTesting
import Testing

@Suite("Write failures")
struct WriteFaultTests {
    /// A journal with three durable records, opened through `faults`. Without
    /// preallocation, so the file's bytes are exactly the records and every
    /// cut is visible in its size (PreallocationTests covers faults in
    /// preallocated space).
    private static func openWithThreeRecords(_ path: String, faults: FaultInjectingSystemCalls,
                                             mode: JournalWriter.Mode = .durable) async throws -> JournalWriter {
        var options = SampleJournal.options(mode: mode, system: faults)
        options.preallocationBytes = 0
        let writer = try await JournalWriter.open(path: path, options: options)
        for payload in SampleJournal.payloads(3) { try await writer.append(type: RecordType(rawValue: 1), payload: payload) }
        return writer
    }

    /// Checks that an append failed with `.io` from `pwrite` with `errno`.
    private static func expectWriteError(_ error: JournalError?, errno: Int32, path: String,
                                         sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .io(let cause)? = error else {
            Issue.record("expected JournalError.io, got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(cause.call == .pwrite, sourceLocation: sourceLocation)
        #expect(cause.errno == errno, sourceLocation: sourceLocation)
        #expect(cause.path == path, sourceLocation: sourceLocation)
    }

    @Test("A write failing with ENOSPC or EIO fails the append, keeps the sequence, leaves the file as it was, and the next append succeeds",
          arguments: [Errno.noSpace.rawValue, Errno.ioError.rawValue])
    func failedWriteLeavesJournalIntact(errno: Int32) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("full.journal")
            let faults = FaultInjectingSystemCalls()
            let writer = try await Self.openWithThreeRecords(path, faults: faults)
            let end = Int(writer.endOffset)
            // The records; the cut-back also drops the preallocated zeros after them.
            let before = Array(try FileBytes.read(path)[..<end])
            let rule = faults.inject(.fail(errno: errno), into: .pwrite, on: .path(path))

            let error = await #expect(throws: JournalError.self) {
                try await writer.append(type: RecordType(rawValue: 1), payload: Array("lost".utf8))
            }
            Self.expectWriteError(error, errno: errno, path: path)
            #expect(faults.timesFired(rule) == 1)
            #expect(writer.nextSequence == 4)
            #expect(writer.endOffset == Int64(before.count))
            #expect(try FileBytes.read(path) == before)
            let (report, records) = try JournalReader(path: path).readAll()
            #expect(report.status == .clean)
            #expect(records.count == 3)

            #expect(try await writer.append(type: RecordType(rawValue: 1), payload: Array("kept".utf8)) == 4)
            try await writer.close()
            let after = try JournalReader(path: path).readAll()
            #expect(after.report.status == .clean)
            #expect(after.records.filter { $0.type != .syncHorizon }.map(\.sequence) == [1, 2, 3, 4])
            #expect(after.records.last { $0.type != .syncHorizon }?.payload == Array("kept".utf8))
        }
    }

    @Test("A torn write (k bytes written, then EIO) is cut back to the record boundary before the next append",
          arguments: [1, 10, 28, 40])
    func tornWriteIsCutBack(writtenBytes: Int) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("torn.journal")
            let faults = FaultInjectingSystemCalls()
            let writer = try await Self.openWithThreeRecords(path, faults: faults)
            // The records; the cut-back also drops the preallocated zeros after them.
            let before = Array(try FileBytes.read(path)[..<Int(writer.endOffset)])
            let truncations = faults.callCount(.ftruncate, on: .path(path))
            let rule = faults.inject(.tornWrite(bytes: writtenBytes, errno: Errno.ioError.rawValue), into: .pwrite, on: .path(path))

            let error = await #expect(throws: JournalError.self) {
                try await writer.append(type: RecordType(rawValue: 1), payload: Array("this record is torn".utf8))
            }
            Self.expectWriteError(error, errno: Errno.ioError.rawValue, path: path)
            #expect(faults.timesFired(rule) == 1)
            #expect(faults.callCount(.ftruncate, on: .path(path)) == truncations + 1)
            #expect(writer.nextSequence == 4)
            #expect(try FileBytes.read(path) == before)
            #expect(try JournalReader(path: path).readAll().report.status == .clean)

            #expect(try await writer.append(type: RecordType(rawValue: 1), payload: Array("whole".utf8)) == 4)
            try await writer.close()
            let after = try JournalReader(path: path).readAll()
            #expect(after.report.status == .clean)
            #expect(after.records.filter { $0.type != .syncHorizon }.map(\.sequence) == [1, 2, 3, 4])
            #expect(after.records.last { $0.type != .syncHorizon }?.payload == Array("whole".utf8))
        }
    }

    @Test("Short writes are finished by the write loop: the append succeeds and reads back whole")
    func shortWritesAreFinished() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("short.journal")
            let faults = FaultInjectingSystemCalls()
            let writer = try await Self.openWithThreeRecords(path, faults: faults)
            let payload = (0..<100).map { UInt8($0) }
            let writesBefore = faults.callCount(.pwrite, on: .path(path))
            let rule = faults.inject(.partialTransfer(bytes: 3), into: .pwrite, on: .path(path), when: .everyCall)

            #expect(try await writer.append(type: RecordType(rawValue: 1), payload: payload) == 4)
            let frame = JournalFormat.recordHeaderLength + payload.count
            #expect(faults.timesFired(rule) == (frame + 2) / 3)
            #expect(faults.callCount(.pwrite, on: .path(path)) - writesBefore == (frame + 2) / 3)
            faults.remove(rule)
            #expect(try await writer.append(type: RecordType(rawValue: 1), payload: [5]) == 5)
            try await writer.close()
            let (report, records) = try JournalReader(path: path).readAll()
            #expect(report.status == .clean)
            #expect(records.filter { $0.type != .syncHorizon }.map(\.sequence) == [1, 2, 3, 4, 5])
            #expect(records[3].payload == payload)
        }
    }

    @Test("A write that fails and cannot be cut back stops the writer and zeroes its partial bytes; reopening finds the clean end and continues gapless")
    func failedCutBackStopsTheWriter() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("stuck.journal")
            let faults = FaultInjectingSystemCalls()
            let writer = try await Self.openWithThreeRecords(path, faults: faults)
            let size = try FileBytes.size(path)
            faults.inject(.tornWrite(bytes: 20, errno: Errno.ioError.rawValue), into: .pwrite, on: .path(path))
            faults.inject(.ioError, into: .ftruncate, on: .path(path))

            await #expect {
                try await writer.append(type: RecordType(rawValue: 1), payload: Array("torn".utf8))
            } throws: { error in
                guard case JournalError.writerFailed(path: path, cause: let cause) = error else { return false }
                return cause.call == .ftruncate
            }
            await #expect {
                try await writer.append(type: RecordType(rawValue: 1), payload: [1])
            } throws: { error in
                if case JournalError.writerFailed = error { return true }
                return false
            }
            // The failed record's first bytes were overwritten with zeros
            // (the whole record's length of them).
            #expect(try FileBytes.size(path) > size + 20)
            let end = Int(writer.endOffset)
            #expect(try FileBytes.read(path)[end...].allSatisfy { $0 == 0 })
            try await writer.close()

            let reopened = try await JournalWriter.open(path: path, options: SampleJournal.options())
            #expect(reopened.recovery.statusFound == .clean)
            #expect(try await reopened.append(type: RecordType(rawValue: 1), payload: [4]) == 4)
            try await reopened.close()
            let (report, records) = try JournalReader(path: path).readAll()
            #expect(report.status == .clean)
            #expect(records.filter { $0.type != .syncHorizon }.map(\.sequence) == [1, 2, 3, 4])
        }
    }

    @Test("In bulk mode a torn write of the buffered records is final: sync() throws writerFailed, the file is cut back to the last synced record, and a reopened writer continues from there")
    func bulkWriteFailureIsCutBackAndFinal() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("bulk-torn.journal")
            let faults = FaultInjectingSystemCalls()
            let writer = try await Self.openWithThreeRecords(path, faults: faults, mode: .bulk)
            try await writer.sync()
            // The synced records; the cut-back also drops the preallocated zeros after them.
            let synced = Array(try FileBytes.read(path)[..<Int(writer.endOffset)])
            for payload in SampleJournal.payloads(2, prefix: "buffered") {
                try await writer.append(type: RecordType(rawValue: 1), payload: payload)
            }
            faults.inject(.tornWrite(bytes: 30, errno: Errno.ioError.rawValue), into: .pwrite, on: .path(path))

            await #expect {
                try await writer.sync()
            } throws: { error in
                guard case JournalError.writerFailed(path: path, cause: let cause) = error else { return false }
                return cause.call == .pwrite && cause.errno == Errno.ioError.rawValue
            }
            #expect(try FileBytes.read(path) == synced)
            await #expect {
                try await writer.append(type: RecordType(rawValue: 1), payload: [1])
            } throws: { error in
                if case JournalError.writerFailed = error { return true }
                return false
            }
            try? await writer.close()

            let reopened = try await JournalWriter.open(path: path, options: SampleJournal.options())
            #expect(reopened.recovery.statusFound == .clean)
            #expect(try await reopened.append(type: RecordType(rawValue: 1), payload: [4]) == 4)
            try await reopened.close()
            let (report, records) = try JournalReader(path: path).readAll()
            #expect(report.status == .clean)
            #expect(records.filter { $0.type != .syncHorizon }.map(\.sequence) == [1, 2, 3, 4])
        }
    }
}

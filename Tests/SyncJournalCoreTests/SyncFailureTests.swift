import SyncJournalCore
import SyncJournalPlatform
import SyncJournalTesting
import Testing

@Suite("Sync failures")
struct SyncFailureTests {
    /// Whether `error` is ``JournalError/writerFailed(path:cause:)`` caused by a failed `fdatasync`.
    private static func isFailedSync(_ error: any Error, path: String) -> Bool {
        guard case JournalError.writerFailed(path: path, cause: let cause) = error else { return false }
        return cause.call == .fdatasync && cause.errno == Errno.ioError.rawValue
    }

    @Test("A failed fdatasync fails the append, is never retried, stops the writer for good, and a reopened writer recovers gapless")
    func failedSyncIsFinal() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("sync.journal")
            let faults = FaultInjectingSystemCalls()
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options(system: faults))
            for payload in SampleJournal.payloads(2) { try await writer.append(type: RecordType(rawValue: 1), payload: payload) }
            #expect(faults.callCount(.fdatasync, on: .path(path)) == 2)
            faults.resetCallCounts()
            // Only the next fdatasync fails: a retry would succeed, which is
            // exactly why the writer must not retry.
            faults.inject(.ioError, into: .fdatasync, on: .path(path), when: .nthCall(1))

            await #expect {
                try await writer.append(type: RecordType(rawValue: 1), payload: Array("not durable".utf8))
            } throws: { Self.isFailedSync($0, path: path) }
            #expect(faults.callCount(.fdatasync) == 1)

            for attempt in 0..<3 {
                await #expect("append \(attempt)") {
                    try await writer.append(type: RecordType(rawValue: 1), payload: [UInt8(attempt)])
                } throws: { Self.isFailedSync($0, path: path) }
            }
            await #expect { try await writer.sync() } throws: { Self.isFailedSync($0, path: path) }
            try await writer.close()
            #expect(faults.callCount(.fdatasync) == 1)
            #expect(faults.callCount(.pwrite, on: .path(path)) == 1)

            // A new writer recovers from what is on disk (here the written but
            // unsynced record 3 survived in the page cache) and continues.
            let reopened = try await JournalWriter.open(path: path, options: SampleJournal.options(system: faults))
            let onDisk = try JournalReader(path: path).readAll()
            #expect(onDisk.report.status == .clean)
            #expect(reopened.nextSequence == onDisk.report.nextSequence)
            let next = try await reopened.append(type: RecordType(rawValue: 1), payload: Array("after reopen".utf8))
            #expect(next == onDisk.report.nextSequence)
            try await reopened.close()
            let (report, records) = try JournalReader(path: path).readAll()
            #expect(report.status == .clean)
            #expect(records.filter { $0.type != .syncHorizon }.map(\.sequence) == Array(1...next))
            #expect(records.last { $0.type != .syncHorizon }?.payload == Array("after reopen".utf8))
        }
    }

    @Test("In bulk mode a failed sync() is final too: later appends and syncs throw writerFailed, with one fdatasync in all")
    func failedBulkSyncIsFinal() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("bulk-sync.journal")
            let faults = FaultInjectingSystemCalls()
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options(mode: .bulk, system: faults))
            for payload in SampleJournal.payloads(5) { try await writer.append(type: RecordType(rawValue: 1), payload: payload) }
            faults.inject(.ioError, into: .fdatasync, on: .path(path), when: .everyCall)
            await #expect { try await writer.sync() } throws: { Self.isFailedSync($0, path: path) }
            await #expect { try await writer.sync() } throws: { Self.isFailedSync($0, path: path) }
            await #expect {
                try await writer.append(type: RecordType(rawValue: 1), payload: [1])
            } throws: { Self.isFailedSync($0, path: path) }
            try await writer.close()
            #expect(faults.callCount(.fdatasync, on: .path(path)) == 1)
        }
    }
}

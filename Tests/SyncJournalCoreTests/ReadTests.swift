import SyncJournalCore
import SyncJournalPlatform
import SyncJournalTesting
import Testing

@Suite("Reading")
struct ReadTests {
    @Test("A journal of about 50 MB (800 records of 64 KiB, bulk mode) scans clean, record by record")
    func largeJournalScansClean() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("large.journal")
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options(mode: .bulk))
            var payload = [UInt8](repeating: 0xA5, count: 64 * 1024)
            for sequence in 1...800 {
                for i in 0..<8 { payload[i] = UInt8(truncatingIfNeeded: sequence >> (8 * i)) }
                try await writer.append(type: RecordType(rawValue: 1), payload: payload)
            }
            try await writer.sync()
            try await writer.close()

            var seen: UInt64 = 0
            let report = try JournalReader(path: path).scan { record in
                guard record.type != .syncHorizon else { return }
                seen += 1
                #expect(record.sequence == seen)
                #expect(record.payload.count == 64 * 1024)
                let stamp = (0..<8).reduce(UInt64(0)) { $0 | UInt64(record.payload[$1]) << UInt64(8 * $1) }
                #expect(stamp == seen)
                #expect(record.payload[64 * 1024 - 1] == 0xA5)
            }
            #expect(report.status == .clean)
            #expect(report.recordCount == 801)  // and the writer's closing record
            #expect(seen == 800)
            #expect(report.fileBytes == 80 + 800 * Int64(JournalFormat.recordHeaderLength + 64 * 1024) + Int64(JournalFormat.recordHeaderLength))
        }
    }

    /// Checks that `body` throws ``JournalError/io(_:)`` from `pread` with `EIO`.
    private static func expectReadError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected a read error", sourceLocation: sourceLocation)
        } catch JournalError.io(let cause) {
            #expect(cause.call == .pread, sourceLocation: sourceLocation)
            #expect(cause.errno == Errno.ioError.rawValue, sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected JournalError.io, got \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("EIO reading the header is an I/O error, for the reader and the writer")
    func readErrorOnTheHeader() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("eio.journal")
            try await SampleJournal.write(SampleJournal.payloads(3), to: path)
            let faults = FaultInjectingSystemCalls()
            faults.inject(.ioError, into: .pread, on: .path(path), when: .everyCall)
            await Self.expectReadError { _ = try JournalReader(path: path, system: faults).scan() }
            await Self.expectReadError { _ = try await JournalWriter.open(path: path, options: SampleJournal.options(system: faults)) }
        }
    }

    @Test("EIO in the middle of a scan is an I/O error, never a torn tail")
    func readErrorMidScan() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("eio-mid.journal")
            var random = SeededGenerator(seed: 5)
            // Three records of 600 KB: the scan needs more than one read.
            try await SampleJournal.write((0..<3).map { _ in random.bytes(600_000) }, to: path)
            let before = try FileBytes.read(path)
            let faults = FaultInjectingSystemCalls()
            let rule = faults.inject(.ioError, into: .pread, on: .path(path), when: .nthCall(2))
            await Self.expectReadError { _ = try JournalReader(path: path, system: faults).scan() }
            #expect(faults.timesFired(rule) == 1)
            faults.removeAllFaults()
            faults.inject(.ioError, into: .pread, on: .path(path), when: .nthCall(2))
            await Self.expectReadError { _ = try await JournalWriter.open(path: path, options: SampleJournal.options(system: faults)) }
            #expect(try FileBytes.read(path) == before)
        }
    }

    @Test("EIO while looking past damage for later records is an I/O error: nothing is classified or cut")
    func readErrorWhileClassifyingDamage() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("eio-tail.journal")
            try await SampleJournal.write(SampleJournal.payloads(3), to: path)
            var random = SeededGenerator(seed: 11)
            // 1.5 MB of non-zero garbage: corruption (no interrupted append
            // writes anything but the journal's records over zeros), but
            // deciding so takes reads past the first window.
            try FileBytes.append(random.bytes(1_500_000).map { $0 | 1 }, to: path)
            let before = try FileBytes.read(path)
            #expect(try JournalReader(path: path).scan().status.name == "corrupt")

            let faults = FaultInjectingSystemCalls()
            // Only the read that looks past the damage fails (later reads would succeed) ...
            let once = faults.inject(.ioError, into: .pread, on: .path(path), when: .nthCall(2))
            await Self.expectReadError { _ = try JournalReader(path: path, system: faults).scan() }
            #expect(faults.timesFired(once) == 1)
            faults.remove(once)
            // ... and every read after the first fails.
            faults.inject(.ioError, into: .pread, on: .path(path), when: .fromNthCall(2))
            await Self.expectReadError { _ = try JournalReader(path: path, system: faults).scan() }
            await Self.expectReadError { _ = try await JournalWriter.open(path: path, options: SampleJournal.options(system: faults)) }
            #expect(try FileBytes.read(path) == before)
            #expect(!FileBytes.exists(path + ".torn-" + String(before.count - 1_500_000)))
        }
    }

    @Test("Short reads are finished by the read loop: a scan through 1-in-7-byte reads is clean and complete")
    func shortReadsAreFinished() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("short-read.journal")
            var random = SeededGenerator(seed: 3)
            let payloads = (0..<5).map { _ in random.bytes(Int.random(in: 0...3000, using: &random)) }
            try await SampleJournal.write(payloads, to: path)
            let faults = FaultInjectingSystemCalls()
            let rule = faults.inject(.partialTransfer(bytes: 7), into: .pread, on: .path(path), when: .everyCall)
            let (report, read) = try JournalReader(path: path, system: faults).readAll()
            let records = read.filter { $0.type != .syncHorizon }
            #expect(report.status == .clean)
            #expect(records.count == payloads.count)
            let samePayloads = records.map(\.payload) == payloads
            #expect(samePayloads, "payloads read through short reads differ from those written")
            #expect(faults.timesFired(rule) >= Int(report.fileBytes) / 7)
        }
    }
}

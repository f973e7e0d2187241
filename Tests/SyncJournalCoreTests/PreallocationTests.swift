import SyncJournalCore
import SyncJournalPlatform
import SyncJournalTesting
import Testing

// The writer extends the journal with zeros ahead of its appends, so
// a durable append overwrites allocated space and its fdatasync has no size
// change to flush. Readers take the zeros for the clean end.

@Suite("Preallocated space")
struct PreallocationTests {
    static func options(_ mode: JournalWriter.Mode, chunk: Int, system: any SystemCalls = PosixSystemCalls()) -> JournalWriter.Options {
        var options = SampleJournal.options(mode: mode, system: system)
        options.preallocationBytes = chunk
        return options
    }

    @Test("Durable appends grow the file a whole chunk at a time, never by one record",
          arguments: [JournalWriter.Mode.durable, .groupCommit, .bulk])
    func appendsGrowByChunks(mode: JournalWriter.Mode) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("chunks.journal")
            let writer = try await JournalWriter.open(path: path, options: Self.options(mode, chunk: 4096))
            var sizes: Set<Int64> = []
            for payload in SampleJournal.payloads(300, prefix: "a-somewhat-longer-record-payload") {
                try await writer.append(type: RecordType(rawValue: 1), payload: payload)
                if mode == .bulk { try await writer.sync() }
                let size = try FileBytes.size(path)
                #expect(size % 4096 == 0, "size \(size) is not a whole number of chunks")
                #expect(size > writer.endOffset, "the file ends past the last record")
                sizes.insert(size)
            }
            // About 22 KB of records: a handful of extensions, not 300.
            #expect(sizes.count <= 7)
            let open = try JournalReader(path: path).scan()
            #expect(open.status == .clean)
            #expect(open.recordCount == 300)
            #expect(open.validBytes == writer.endOffset)
            #expect(open.preallocatedBytes == open.fileBytes - open.validBytes)
            try await writer.close()
            #expect(try FileBytes.size(path) == writer.endOffset)
        }
    }

    @Test("With preallocation off the file of a 2.1 journal ends at the last record after every append")
    func preallocationOff() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("off.journal")
            let writer = try await JournalWriter.open(path: path, options: Self.options(.durable, chunk: 0))
            for payload in SampleJournal.payloads(20) {
                try await writer.append(type: RecordType(rawValue: 1), payload: payload)
                #expect(try FileBytes.size(path) == writer.endOffset)
            }
            try await writer.close()
        }
    }

    @Test("A 2.2 journal keeps the closed-end rule with preallocation off: it grows in 4 KiB steps, never to a size that ends a record, and a close cuts them")
    func leastPreallocationOfA22Journal() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("least.journal")
            var options = SampleJournal.options(minorVersion: JournalFormat.minorVersion)
            options.preallocationBytes = 0
            let writer = try await JournalWriter.open(path: path, options: options)
            for payload in SampleJournal.payloads(200) {
                try await writer.append(type: RecordType(rawValue: 1), payload: payload)
                let size = try FileBytes.size(path)
                #expect(size % 4096 == 0 && size > writer.endOffset && size - writer.endOffset <= 4096, "size \(size)")
            }
            try await writer.close()
            #expect(try FileBytes.size(path) == writer.endOffset)
        }
    }

    @Test("A writer killed without closing leaves zeros that the next writer appends over")
    func killedWriterLeavesZerosThatReopenUses() async throws {
        let disk = SimulatedDisk()
        disk.createDirectory("/p")
        let path = "/p/killed.journal"
        let first = try await JournalWriter.open(path: path, options: Self.options(.durable, chunk: 8192, system: disk.process()))
        for payload in SampleJournal.payloads(10) { try await first.append(type: RecordType(rawValue: 1), payload: payload) }
        let end = first.endOffset
        _ = disk.crash(.processCrash)

        let report = try JournalReader(path: path, system: disk.process()).scan()
        #expect(report.status == .clean)
        #expect(report.recordCount == 10)
        #expect(report.validBytes == end)
        #expect(report.preallocatedBytes == 8192 - end)

        let second = try await JournalWriter.open(path: path, options: Self.options(.durable, chunk: 8192, system: disk.process()))
        #expect(second.recovery.bytesCut == 0)
        #expect(second.recovery.statusFound == .clean)
        #expect(try await second.append(type: RecordType(rawValue: 1), payload: [1, 2, 3]) == 11)
        #expect(disk.contents(of: path)?.count == 8192)
        try await second.close()
        let after = try JournalReader(path: path, system: disk.process()).readAll()
        #expect(after.records.filter { $0.type != .syncHorizon }.map(\.sequence) == Array(1...11))
        #expect(after.records.last?.type == .syncHorizon)
        #expect(after.report.fileBytes == after.report.validBytes)
    }

    @Test("Every power-loss state of each append into preallocated space (and of each extension) keeps every acknowledged record, opening clean or torn")
    func powerLossKeepsAcknowledgedRecords() async throws {
        let disk = SimulatedDisk()
        disk.createDirectory("/p")
        let path = "/p/power.journal"
        let held = SyncHoldingSystemCalls(disk.process())
        let writer = try await JournalWriter.open(path: path, options: Self.options(.durable, chunk: 1024, system: held))
        var acknowledged: [UInt64] = []
        var statesChecked = 0
        var lengthChanges = 0
        var failures: [String] = []
        for (index, payload) in SampleJournal.payloads(40, prefix: String(repeating: "p", count: 90)).enumerated() {
            // The append is written (with the zeros of an extension when it needs one); its fdatasync waits.
            held.holdNextSync()
            let append = Task { try await writer.append(type: RecordType(rawValue: 1), payload: payload) }
            await held.waitUntilHeld()
            let states = disk.powerLossStates()
            if states.files.contains(where: { $0.lengthCanChange }) { lengthChanges += 1 }
            for mode in states {
                let copy = disk.snapshot()
                copy.crash(mode)
                statesChecked += 1
                do {
                    let (report, records) = try JournalReader(path: path, system: copy.process()).readAll()
                    let sequences = records.map(\.sequence)
                    if report.status.name == "corrupt" || !(sequences == acknowledged || sequences == acknowledged + [UInt64(index + 1)]) {
                        failures.append("append \(index + 1), \(mode): \(report.status), records \(sequences.first ?? 0)...\(sequences.last ?? 0)")
                    }
                } catch {
                    failures.append("append \(index + 1), \(mode): \(error)")
                }
            }
            held.release()
            acknowledged.append(try await append.value)
        }
        try await writer.close()
        print("preallocation power loss: \(statesChecked) crash states of 40 appends (\(lengthChanges) extending the file), \(failures.count) failing")
        #expect(failures.isEmpty, "\(failures.count) of \(statesChecked) states: \(failures.prefix(3))")
        #expect(lengthChanges > 0 && statesChecked > 80)
    }

    @Test("A disk too full for the zeros still takes an append that fits")
    func fullDiskStillTakesAFittingAppend() async throws {
        let probe = SimulatedDisk()
        probe.createDirectory("/p")
        let path = "/p/full.journal"
        // Measure what one record needs, then leave room for it and little more.
        let sizing = try await JournalWriter.open(path: path, options: Self.options(.durable, chunk: 0, system: probe.process()))
        let headerEnd = sizing.endOffset
        try await sizing.append(type: RecordType(rawValue: 1), payload: [UInt8](repeating: 7, count: 100))
        let recordEnd = sizing.endOffset
        try await sizing.close()

        let disk = SimulatedDisk(capacityBytes: Int(recordEnd) + 16)
        disk.createDirectory("/p")
        let writer = try await JournalWriter.open(path: path, options: Self.options(.durable, chunk: 1 << 20, system: disk.process()))
        #expect(writer.endOffset == headerEnd)
        #expect(try await writer.append(type: RecordType(rawValue: 1), payload: [UInt8](repeating: 7, count: 100)) == 1)
        try await writer.close()
        let (report, records) = try JournalReader(path: path, system: disk.process()).readAll()
        #expect(report.status == .clean)
        #expect(records.count == 1)
    }

    @Test("A torn write inside preallocated space is cut back to the record boundary and the next append succeeds")
    func tornWriteInPreallocatedSpace() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("torn-prealloc.journal")
            let faults = FaultInjectingSystemCalls()
            let writer = try await JournalWriter.open(path: path, options: Self.options(.durable, chunk: 65536, system: faults))
            for payload in SampleJournal.payloads(3) { try await writer.append(type: RecordType(rawValue: 1), payload: payload) }
            let end = writer.endOffset
            #expect(try FileBytes.size(path) == 65536)
            faults.inject(.tornWrite(bytes: 10, errno: Errno.ioError.rawValue), into: .pwrite, on: .path(path))
            await #expect(throws: JournalError.self) {
                try await writer.append(type: RecordType(rawValue: 1), payload: Array("torn".utf8))
            }
            #expect(writer.endOffset == end)
            // The torn bytes are gone; the zeros after them went with them.
            #expect(try FileBytes.size(path) == end)
            #expect(try await writer.append(type: RecordType(rawValue: 1), payload: Array("kept".utf8)) == 4)
            #expect(try FileBytes.size(path) == 65536)
            try await writer.close()
            let (report, records) = try JournalReader(path: path).readAll()
            #expect(report.status == .clean)
            #expect(records.filter { $0.type != .syncHorizon }.map(\.sequence) == [1, 2, 3, 4])
            #expect(records.last { $0.type != .syncHorizon }?.payload == Array("kept".utf8))
        }
    }
}

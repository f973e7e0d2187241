import SyncJournalCore
import SyncJournalTesting
import Testing

@Suite("Closing")
struct CloseRaceTests {
    /// Holds the writer's queue inside an `fdatasync`: in bulk mode the one of
    /// an explicit `sync()`, in durable mode the one of an append (record 2).
    private static func holdQueue(_ writer: JournalWriter, _ pausing: SyncHoldingSystemCalls) async -> Task<Void, any Error> {
        pausing.holdNextSync()
        let task: Task<Void, any Error>
        if writer.mode == .bulk {
            task = Task { try await writer.sync() }
        } else {
            task = Task { () async throws -> Void in
                let sequence = try await writer.append(type: RecordType(rawValue: 1), payload: [2])
                #expect(sequence == 2)
            }
        }
        await pausing.waitUntilHeld()
        return task
    }

    @Test("An append that arrives while close() waits for the writer's queue never writes through the closed descriptor",
          // A guard against a hang, not a timing: its Task.yield() loops wait
          // behind whatever else the two cores run in the full suite.
          .timeLimit(.minutes(5)), arguments: [JournalWriter.Mode.bulk, .durable])
    func appendRacingCloseNeverUsesTheClosedDescriptor(mode: JournalWriter.Mode) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("closing.journal")
            let pausing = SyncHoldingSystemCalls()
            let faults = FaultInjectingSystemCalls(wrapping: pausing)
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options(mode: mode, system: faults))
            #expect(try await writer.append(type: RecordType(rawValue: 1), payload: [1]) == 1)
            faults.resetCallCounts()

            // Busy queue, then close() (its work queues behind), then an append
            // while close() waits its turn.
            let holding = await Self.holdQueue(writer, pausing)
            let closing = Task { try await writer.close() }
            for _ in 0..<100 { await Task.yield() }
            let late = Task { try await writer.append(type: RecordType(rawValue: 1), payload: [3]) }
            for _ in 0..<100 { await Task.yield() }
            pausing.release()
            try await holding.value
            try await closing.value
            let appended = await late.result

            // Every write went through the journal's own open descriptor.
            #expect(faults.callCount(.pwrite) == faults.callCount(.pwrite, on: .path(path)))
            let (report, read) = try JournalReader(path: path).readAll()
            let records = read.filter { $0.type != .syncHorizon }
            #expect(report.status == .clean)
            let before: [[UInt8]] = mode == .bulk ? [[1]] : [[1], [2]]
            switch appended {
            case .success(let sequence):
                // Accepted before close(): written (and synced) before the file closed.
                #expect(sequence == UInt64(before.count + 1))
                #expect(records.map(\.payload) == before + [[3]])
            case .failure(let error):
                #expect(error as? JournalError == .closed(path: path))
                #expect(records.map(\.payload) == before)
            }
        }
    }
}

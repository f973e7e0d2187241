import SyncJournalCore
import SyncJournalPlatform
import SyncJournalTesting
import Testing

@Suite("Durability barrier through the system-call seam")
struct DurabilityBarrierTests {
    @Test("Each durable append reaches the platform's barrier once, through the seam apps and tests wrap")
    func appendsCallTheBarrier() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("barrier.journal")
            let faults = FaultInjectingSystemCalls(wrapping: PosixSystemCalls())
            let writer = try await JournalWriter.open(path: path, options: .init(system: faults))
            faults.resetCallCounts()
            for index in 0..<3 { try await writer.append(type: RecordType(rawValue: 1), payload: [UInt8(index)]) }
            #expect(faults.callCount(.fdatasync, on: .path(path)) == 3)
            try await writer.close()
        }
    }

    @Test("A failing call of the real layer reports the call, the path and the errno by name")
    func failingCallNamesErrnoAndPath() async throws {
        try await withTemporaryDirectory { directory in
            let missing = directory.file("missing.journal")
            do throws(SystemError) {
                _ = try PosixSystemCalls().open(missing, .readWrite, 0)
                Issue.record("opening a missing file succeeded")
            } catch {
                #expect(error.call == .open)
                #expect(error.path == missing)
                #expect(error.code == .noSuchFile)
                #expect(error.description.contains("ENOENT"))
                #expect(error.description.contains(missing))
            }
        }
    }

    @Test("A failed barrier on the real layer is reported as fdatasync with its errno")
    func failedBarrierIsReported() {
        #expect(throws: SystemError(call: .fdatasync, errno: Errno.badDescriptor.rawValue)) {
            try PosixSystemCalls().fdatasync(FileDescriptor(rawValue: -1))
        }
    }
}

import Foundation
import Testing
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync

/// Pushes and pulls per second of each storage from four threads, printed,
/// never asserted (a shared machine's timings say nothing). Runs only with
/// `SYNCJOURNAL_MEASURE=1 swift test --filter StorageThroughputTests`.
@Suite("storage throughput (SYNCJOURNAL_MEASURE=1)",
       .enabled(if: ProcessInfo.processInfo.environment["SYNCJOURNAL_MEASURE"] == "1", "a measurement; set SYNCJOURNAL_MEASURE=1 to run it"))
struct StorageThroughputTests {
    @Test("pushes of one create and pulls of 100 rows, four threads", arguments: StorageBackend.tested)
    func throughput(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        let threads = 4
        let pushesPerThread = 250
        let clock = ContinuousClock()
        let pushStart = clock.now
        ConcurrentThreads.run((0..<threads).map { thread in
            { @Sendable in
                for index in 0..<pushesPerThread {
                    _ = try? storage.push(user: "u1", [Mutations.create("t\(thread)-\(index)", ["n": .int(Int64(index))])])
                }
            }
        })
        let pushSeconds = Self.seconds(clock.now - pushStart)
        let pullsPerThread = 250
        let pullStart = clock.now
        ConcurrentThreads.run((0..<threads).map { _ in
            { @Sendable in
                var cursor: PullCursor?
                for _ in 0..<pullsPerThread {
                    let page = try? storage.pull(user: "u1", PullRequest(cursors: ["pin": cursor], limit: 100))
                    cursor = page?.hasMore == true ? page?.nextCursors["pin"] : nil
                }
            }
        })
        let pullSeconds = Self.seconds(clock.now - pullStart)
        let rows = try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10_000)).rows.count
        #expect(rows == threads * pushesPerThread)
        print("storage throughput \(backend.rawValue): \(Int(Double(threads * pushesPerThread) / pushSeconds)) pushes/s (1 create each), "
              + "\(Int(Double(threads * pullsPerThread) / pullSeconds)) pulls/s (100 rows each), \(threads) threads")
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync

extension Workloads {
    // MARK: 11. Backlog: an edit on a device back from a long time offline

    /// A transport never called: the engine is started offline.
    private struct UnusedTransport: SyncTransport {
        func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] { throw .offline }
        func pull(_ request: PullRequest) async throws(TransportError) -> PullPage { throw .offline }
    }

    /// One editor's update latency through a store with `queued` operations
    /// already waiting (made in transactions of 1,000), with a sync engine
    /// attached, offline, and its status followed the way a status bar
    /// follows it: every edit tells the engine, which refreshes the counts
    /// it shows. `edits` updates, one at a time, each durable when it returns.
    static func backlog(directory: String, queued: Int, edits: Int, prefix: String) async throws(BenchError) -> Figures {
        let path = directory + "/\(prefix).journal"
        Files.remove(path)
        defer { Files.remove(path) }
        do {
            let store = try await LocalStore.open(path: path, options: LocalStore.Options(system: PosixSystemCalls()))
            var made = 0
            while made < queued {
                let count = min(1_000, queued - made)
                let first = made
                try await store.write { tx in
                    for n in first..<(first + count) { try tx.create("item", id: Records.recordID(n), fields: Records.fields(n)) }
                }
                made += count
            }
            try await store.create("item", id: "edited", fields: Records.fields(0))
            let engine = SyncEngine(store: store, transport: UnusedTransport(), options: SyncEngine.Options(kinds: ["item"]))
            let updates = await engine.statusUpdates()
            let follower = Task {
                var seen = 0
                for await _ in updates { seen += 1 }
                return seen
            }
            await engine.start(online: false)
            var latencies: [Double] = []
            latencies.reserveCapacity(edits)
            for n in 0..<edits {
                let began = Clock.now()
                try await store.update("item", id: "edited", changes: Records.fields(n))
                latencies.append(Clock.now() - began)
            }
            let counted = try await store.outboxStatus().count
            await engine.stop()
            try await store.close()
            follower.cancel()
            _ = await follower.value
            // Updates of one record coalesce into its queued create: the backlog stays as it was.
            guard counted == queued + 1 else { throw BenchError("\(prefix): \(counted) operations queued, expected \(queued + 1)") }
            return ["\(prefix).p50": Statistics.quantile(latencies, 0.5) * 1e6,
                    "\(prefix).p99": Statistics.quantile(latencies, 0.99) * 1e6]
        } catch let error as BenchError {
            throw error
        } catch {
            throw BenchError("\(prefix): \(error)")
        }
    }
}

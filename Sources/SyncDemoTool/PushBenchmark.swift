import Foundation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import SyncJournalCommandLine

/// `sync-demo --push-benchmark N`: gives the device N server rows, queues an
/// update of each through the store API,
/// pushes them all to the in-memory reference server, and reports the time
/// and the process's memory as the push proceeds, so a leak that grows with
/// the operations already sent would show.
enum PushBenchmark {
    /// Resident memory now, in MiB (from /proc/self/statm).
    static func residentMiB() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Double(fields[1]) else { return 0 }
        return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }

    /// Peak resident memory of the process so far, in MiB.
    static func peakMiB() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
    }

    /// Records resident memory every `every` mutations pushed.
    actor Sampler: SyncTransport {
        let base: any SyncTransport
        let every: Int
        var pushed = 0
        var samples: [(Int, Double)] = []
        init(base: any SyncTransport, every: Int) {
            self.base = base
            self.every = every
        }
        func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
            let results = try await base.push(mutations)
            let before = pushed / every
            pushed += mutations.count
            if pushed / every != before { samples.append((pushed, PushBenchmark.residentMiB())) }
            return results
        }
        func pull(_ request: PullRequest) async throws(TransportError) -> PullPage { try await base.pull(request) }
    }

    static func run(operations: Int, directory: String, withReferenceServer: Bool, output: ToolOutput) async throws -> Bool {
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try await LocalStore.open(path: directory + "/push-benchmark.journal",
                                              options: .init(upkeep: .off))
        let startRSS = residentMiB()
        // The device first knows N server rows, then edits each once: the
        // snapshot keeps its size while the outbox drains, so memory that
        // grew with the operations already sent would show.
        let server = ReferenceServer()
        var chunk: [ServerRow] = []
        for n in 0..<operations {
            let fields: [String: FieldValue] = ["n": .int(Int64(n)), "text": .string("server copy of record \(n)")]
            let row = withReferenceServer
                ? await server.write(user: "u1", kind: "item", id: "i\(n)", fields: fields)
                : ServerRow(kind: "item", id: "i\(n)", fields: fields, updatedAt: Int64(n))
            chunk.append(row)
            if chunk.count == 1000 || n == operations - 1 {
                try await store.applyPulledPages([.init(kind: "item", rows: chunk, cursor: nil)])
                chunk.removeAll(keepingCapacity: true)
            }
        }
        let seededRSS = residentMiB()
        let queueStart = Date()
        let next = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    while let n = await next.take(below: operations) {
                        _ = try? await store.update("item", id: "i\(n)", changes: ["text": .string("edited on the device, number \(n)")])
                    }
                }
            }
        }
        let queued = try await store.outboxOperations().count
        let queueSeconds = Date().timeIntervalSince(queueStart)
        let queuedRSS = residentMiB()
        output.standard(String(format: "device knows %d server rows: resident %.1f MiB (start %.1f)\n", operations, seededRSS, startRSS))
        output.standard(String(format: "queued %d updates in %.1f s (%.0f/s, 64 concurrent editors, group commit); resident %.1f MiB\n",
                               queued, queueSeconds, Double(queued) / queueSeconds, queuedRSS))
        let base: any SyncTransport = withReferenceServer ? server.transport(user: "u1") : AcknowledgingTransport()
        let sampler = Sampler(base: base, every: max(1, operations / 10))
        let engine = SyncEngine(store: store, transport: sampler, options: .init(kinds: [], batchSize: 500))
        let pushStart = Date()
        let outcome = await engine.sync()
        let pushSeconds = Date().timeIntervalSince(pushStart)
        output.standard(String(format: "pushed: %@ in %.1f s (%.0f operations/s)\n", outcome.description, pushSeconds, Double(queued) / pushSeconds))
        for (pushed, rss) in await sampler.samples {
            output.standard(String(format: "  after %7d pushed: resident %.1f MiB\n", pushed, rss))
        }
        let remaining = try await store.outboxOperations().count
        output.standard(String(format: "outbox left: %d; snapshot rows: %d; peak resident %.1f MiB (%@)\n",
                               remaining, try await store.currentState().snapshot.count, peakMiB(),
                               withReferenceServer ? "device and in-process reference server" : "device only: the server stand-in keeps nothing"))
        try await store.close()
        return remaining == 0 && outcome == .ok(pushed: queued, pulled: 0, conflicts: 0)
    }

    /// A server stand-in that applies everything and keeps nothing, so the
    /// measurement shows the device side alone.
    struct AcknowledgingTransport: SyncTransport {
        func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
            mutations.map { mutation in
                MutationResult(operationID: mutation.operationID, outcome: .applied(ServerRow(
                    kind: mutation.kind, id: mutation.recordID, fields: mutation.fields, updatedAt: Int64.max / 2)))
            }
        }
        func pull(_ request: PullRequest) async throws(TransportError) -> PullPage {
            PullPage(rows: [], nextCursors: [:], hasMore: false)
        }
    }

    actor Counter {
        var value = 0
        func take(below limit: Int) -> Int? {
            guard value < limit else { return nil }
            value += 1
            return value - 1
        }
    }
}

import Dispatch
import SyncJournalPlatform
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// One round of each workload and each baseline. Every function returns
/// named figures (`"durable.edits"` …); ``JournalBenchCommand`` runs them
/// interleaved, round after round, and keeps every sample.
enum Workloads {
    typealias Figures = [String: Double]

    static func storeOptions(_ system: any SystemCalls) -> LocalStore.Options {
        LocalStore.Options(system: system, upkeep: .off)
    }

    static func storeError(_ what: String, _ error: any Error) -> BenchError { BenchError("\(what): \(error)") }

    // MARK: 1. One durable edit at a time

    /// Creates `count` records one after another through `LocalStore`; each
    /// returns once durable.
    static func durableEdits(directory: String, count: Int) async throws(BenchError) -> Figures {
        let path = directory + "/durable.journal"
        Files.remove(path)
        defer { Files.remove(path) }
        let counting = CountingSystemCalls()
        do {
            let store = try await LocalStore.open(path: path, options: storeOptions(counting))
            let syncsBefore = counting.fdatasyncCount
            var latencies: [Double] = []
            latencies.reserveCapacity(count)
            let start = Clock.now()
            for n in 0..<count {
                let began = Clock.now()
                try await store.create("item", id: Records.recordID(n), fields: Records.fields(n))
                latencies.append(Clock.now() - began)
            }
            let seconds = Clock.now() - start
            let syncs = counting.fdatasyncCount - syncsBefore
            // What an edit costs beyond the disk: the trip from the caller to
            // the store's thread and back, measured alone (a read of no data).
            var trips: [Double] = []
            trips.reserveCapacity(count)
            for _ in 0..<count {
                let began = Clock.now()
                _ = await store.status
                trips.append(Clock.now() - began)
            }
            try await store.close()
            return ["durable.edits": Double(count) / seconds,
                    "durable.p50": Statistics.quantile(latencies, 0.5) * 1e6,
                    "durable.p99": Statistics.quantile(latencies, 0.99) * 1e6,
                    "durable.trip-p50": Statistics.quantile(trips, 0.5) * 1e6,
                    "durable.syncs": Double(syncs)]
        } catch {
            throw storeError("durable edits", error)
        }
    }

    /// Raw `pwrite` + `fdatasync` per record (or per `perSync` records).
    static func rawSynced(directory: String, count: Int, perSync: Int, preallocated: Bool, prefix: String) throws(BenchError) -> Figures {
        let run = try RawFile.appendLoop(path: directory + "/raw.bin", record: Records.rawRecord, count: count,
                                         perSync: perSync, preallocated: preallocated)
        return [prefix + ".rate": Double(count) / run.seconds,
                prefix + ".p50": Statistics.quantile(run.latencies, 0.5) * 1e6,
                prefix + ".p99": Statistics.quantile(run.latencies, 0.99) * 1e6,
                prefix + ".syncs": Double(run.latencies.count)]
    }

    /// Raw `pwrite` + `fdatasync` per record into a preallocated file, each
    /// done on a serial dispatch queue while the calling task awaits it: the
    /// disk plus the two thread hand-overs (caller to the writing thread and
    /// back) that any store pays which keeps blocking I/O off the caller's
    /// thread. The floor under a durable edit's latency.
    static func rawSyncedOnQueue(directory: String, count: Int) async throws(BenchError) -> Figures {
        let path = directory + "/raw-queue.bin"
        let record = Records.rawRecord
        let fd = try RawFile.fresh(path, preallocateBytes: record.count * (count + 64) + (1 << 20))
        defer {
            try? SystemFile.close(fd)
            Files.remove(path)
        }
        let queue = DispatchQueue(label: "journal-bench.raw-queue")
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        let start = Clock.now()
        for n in 0..<count {
            let began = Clock.now()
            let offset = Int64(n * record.count)
            let result: Result<Void, BenchError> = await withCheckedContinuation { continuation in
                queue.async {
                    let done = record.withUnsafeBytes { raw -> Result<Void, BenchError> in
                        do throws(BenchError) {
                            try RawFile.pwriteAll(fd, raw, at: offset, path: path)
                            try RawFile.sync(fd, path: path)
                            return .success(())
                        } catch {
                            return .failure(error)
                        }
                    }
                    continuation.resume(returning: done)
                }
            }
            try result.get()
            latencies.append(Clock.now() - began)
        }
        let seconds = Clock.now() - start
        return ["raw1-queue.rate": Double(count) / seconds,
                "raw1-queue.p50": Statistics.quantile(latencies, 0.5) * 1e6,
                "raw1-queue.p99": Statistics.quantile(latencies, 0.99) * 1e6]
    }

    /// Raw buffered `write` per record, never synced.
    static func rawBuffered(directory: String, count: Int) throws(BenchError) -> Figures {
        let run = try RawFile.appendLoop(path: directory + "/raw.bin", record: Records.rawRecord, count: count,
                                         perSync: 0, preallocated: false)
        let rate = Double(count) / run.seconds
        return ["raw-buffered.rate": rate, "raw-buffered.mbps": rate * Double(Records.rawRecord.count) / 1e6]
    }

    /// SQLite WAL with the seed's outbox table.
    static func sqlite(directory: String, count: Int, perTransaction: Int, synchronous: SQLiteOutbox.Synchronous, prefix: String) throws(BenchError) -> Figures {
        let run = try SQLiteOutbox.measure(path: directory + "/outbox.sqlite", synchronous: synchronous, count: count,
                                           perTransaction: perTransaction, payload: Records.sqlitePayload)
        return [prefix + ".rate": Double(count) / run.seconds,
                prefix + ".p50": Statistics.quantile(run.latencies, 0.5) * 1e6,
                prefix + ".p99": Statistics.quantile(run.latencies, 0.99) * 1e6]
    }

    // MARK: Memory per queued operation

    /// Heap in use per queued operation: 64 editors create `count` records
    /// through one store (each a queued create, none sent), and the heap in
    /// use afterwards, above what it was before the store opened, is divided
    /// by `count`. The store's visible state, what later edits are decided
    /// against, and its outbox are all in it.
    static func memoryPerQueued(directory: String, count: Int, editors: Int) async throws(BenchError) -> Figures {
        let path = directory + "/memory.journal"
        Files.remove(path)
        defer { Files.remove(path) }
        do {
            let heapBefore = HeapSampler.inUse()
            let store = try await LocalStore.open(path: path, options: storeOptions(PosixSystemCalls()))
            let failed = await createConcurrently(count, editors: editors, through: store)
            let queued = try await store.outboxOperations().count
            let heapAfter = HeapSampler.inUse()
            try await store.close()
            if failed > 0 || queued != count { throw BenchError("memory: \(failed) creates failed, \(queued) of \(count) queued") }
            // The same queue replayed into a store that has written nothing
            // since: its staged state still shares the durable state's storage.
            let heapBeforeReopen = HeapSampler.inUse()
            let reopened = try await LocalStore.open(path: path, options: storeOptions(PosixSystemCalls()))
            let heapReopened = HeapSampler.inUse()
            try await reopened.close()
            return ["memory.perOperation": Double(max(0, heapAfter - heapBefore)) / Double(count),
                    "memory.perOperationReopened": Double(max(0, heapReopened - heapBeforeReopen)) / Double(count)]
        } catch let error as BenchError {
            throw error
        } catch {
            throw storeError("memory", error)
        }
    }

    // MARK: 2. Concurrent editors, group commit

    final class Counter: Sendable {
        private let value = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        func take(below limit: Int) -> Int? {
            let n = value.add(1, ordering: .relaxed).oldValue
            return n < limit ? n : nil
        }
    }

    /// `editors` tasks create records 0..<`count` through `store`, each taking
    /// the next number; returns how many creates failed.
    static func createConcurrently(_ count: Int, editors: Int, through store: LocalStore) async -> Int {
        let next = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<editors {
                group.addTask {
                    while let n = next.take(below: count) {
                        do { try await store.create("item", id: Records.recordID(n), fields: Records.fields(n)) } catch {
                            next.failures.add(1, ordering: .relaxed)
                        }
                    }
                }
            }
        }
        return next.failures.load(ordering: .relaxed)
    }

    /// `editors` tasks create `count` records through one `LocalStore`; each
    /// create returns once durable. Counts the `fdatasync` calls issued.
    static func groupCommit(directory: String, count: Int, editors: Int) async throws(BenchError) -> Figures {
        let path = directory + "/group.journal"
        Files.remove(path)
        defer { Files.remove(path) }
        let counting = CountingSystemCalls()
        do {
            let store = try await LocalStore.open(path: path, options: storeOptions(counting))
            let syncsBefore = counting.fdatasyncCount
            let start = Clock.now()
            let failed = await createConcurrently(count, editors: editors, through: store)
            let seconds = Clock.now() - start
            let syncs = counting.fdatasyncCount - syncsBefore
            try await store.close()
            if failed > 0 { throw BenchError("group commit: \(failed) creates failed") }
            return ["group.edits": Double(count) / seconds, "group.syncs": Double(syncs)]
        } catch let error as BenchError {
            throw error
        } catch {
            throw storeError("group commit", error)
        }
    }

    // MARK: 3. Process-crash durability: written, synced in the background

    /// Appends `count` edits to a bulk-mode writer (each encoded from its
    /// operation) while a background task syncs every `syncEveryMilliseconds`.
    static func bulkEdits(directory: String, count: Int, syncEveryMilliseconds: Int = 10) async throws(BenchError) -> Figures {
        let path = directory + "/bulk.journal"
        Files.remove(path)
        defer { Files.remove(path) }
        do {
            let writer = try await JournalWriter.open(path: path, options: .init(mode: .bulk))
            let done = Atomic<Bool>(false)
            let start = Clock.now()
            let syncer = Task {
                var syncs = 0
                while !done.load(ordering: .relaxed) {
                    try? await Task.sleep(for: .milliseconds(syncEveryMilliseconds))
                    try await writer.sync()
                    syncs += 1
                }
                return syncs
            }
            for n in 0..<count {
                let event = StoreEvent.edit(Records.operation(n), compaction: [])
                try await writer.append(type: event.recordType, payload: event.encodedPayload())
            }
            done.store(true, ordering: .relaxed)
            _ = try await syncer.value
            try await writer.sync()
            let seconds = Clock.now() - start
            let bytes = Double(writer.endOffset - Int64(JournalFormat.headerLength))
            try await writer.close()
            return ["bulk.edits": Double(count) / seconds, "bulk.mbps": bytes / seconds / 1e6]
        } catch {
            throw storeError("bulk edits", error)
        }
    }

    // MARK: Journal generation (replay, checkpoint, push)

    /// Writes a store journal of `events` through a bulk writer.
    static func writeJournal(path: String, events: some Sequence<StoreEvent>) async throws(BenchError) {
        Files.remove(path)
        do {
            let writer = try await JournalWriter.open(path: path, options: .init(mode: .bulk))
            for event in events { try await writer.append(type: event.recordType, payload: event.encodedPayload()) }
            try await writer.close()
        } catch {
            throw storeError("writing \(path)", error)
        }
    }

    /// `rows` server rows of kind "item", in pages of 500.
    static func pulledPages(_ rows: [ServerRow]) -> [StoreEvent] {
        stride(from: 0, to: rows.count, by: 500).map { start in
            let page = Array(rows[start..<min(rows.count, start + 500)])
            return StoreEvent.pulled(kind: "item", rows: page, cursor: PullCursor(updatedAt: page[page.count - 1].updatedAt, id: page[page.count - 1].id))
        }
    }

    /// A replay journal: `liveRecords` server rows, then `operations` edits
    /// that each update one of them; an update of a record with a queued
    /// update merges into it (a compacted edit), so the live state stays
    /// `liveRecords` rows and at most as many queued operations however long
    /// the journal is.
    static func replayJournal(path: String, operations: Int, liveRecords: Int) async throws(BenchError) {
        let rows = (0..<liveRecords).map { n in
            ServerRow(kind: "item", id: Records.recordID(n), fields: Records.fields(n, text: "server copy"), updatedAt: Records.stamp + Int64(n))
        }
        let shortText = String(Records.text.utf8.prefix(40)) ?? "edited"
        var queued: [JournalOperation?] = Array(repeating: nil, count: liveRecords)
        let edits = (0..<operations).lazy.map { n -> StoreEvent in
            let target = n % liveRecords
            let operation = JournalOperation(id: .random(), kind: .update, entity: "item", recordID: Records.recordID(target),
                                             fields: ["text": .string(shortText), "n": .int(Int64(n))],
                                             baseUpdatedAt: Records.stamp + Int64(target), queuedAt: Records.stamp + Int64(n))
            if var merged = queued[target] {
                merged.fields.merge(operation.fields) { _, new in new }
                queued[target] = merged
                return .edit(operation, compaction: [.replace(merged.id, with: merged), .remove(operation.id)])
            }
            queued[target] = operation
            return .edit(operation, compaction: [])
        }
        try await writeJournal(path: path, events: AnySequence(pulledPages(rows)).concatenated(with: edits))
    }

    /// A checkpoint journal of `operations` edits, half of them dead: creates
    /// of `operations / 2` records, then an update of each, which merges
    /// into its create.
    static func checkpointJournal(path: String, operations: Int) async throws(BenchError) {
        let half = operations / 2
        var creates: [JournalOperation] = []
        creates.reserveCapacity(half)
        let events = (0..<operations).lazy.map { n -> StoreEvent in
            if n < half {
                let create = Records.operation(n)
                creates.append(create)
                return .edit(create, compaction: [])
            }
            let target = n - half
            let update = JournalOperation(id: .random(), kind: .update, entity: "item", recordID: Records.recordID(target),
                                          fields: ["n": .int(Int64(n))], baseUpdatedAt: nil, queuedAt: Records.stamp + Int64(n))
            var merged = creates[target]
            merged.fields.merge(update.fields) { _, new in new }
            return .edit(update, compaction: [.replace(merged.id, with: merged), .remove(update.id)])
        }
        try await writeJournal(path: path, events: events)
    }

    // MARK: 4. Reopen and replay

    /// Opens a store on `path` (the recovery scan replays every record) and
    /// closes it. Peak memory is measured above the resident size before.
    static func replay(path: String, prefix: String, measureMemory: Bool) async throws(BenchError) -> Figures {
        let heapBefore = HeapSampler.inUse()
        let bytes = Double(Files.size(path))
        // The heap sampler's mallinfo2 calls would slow the timed pass, so
        // memory has a pass of its own.
        let sampler = measureMemory ? HeapSampler() : nil
        sampler?.start()
        do {
            let start = Clock.now()
            let store = try await LocalStore.open(path: path, options: storeOptions(PosixSystemCalls()))
            let seconds = Clock.now() - start
            let heapPeak = sampler?.finish() ?? 0
            guard case .ready = await store.status else { throw BenchError("replay: the store did not open ready: \(await store.status)") }
            let records = Double(store.recovery?.recordCount ?? 0)
            try await store.close()
            if measureMemory { return [prefix + ".memory": Double(max(0, heapPeak - heapBefore)) / 1_048_576] }
            return [prefix + ".records": records / seconds, prefix + ".mbps": bytes / seconds / 1e6, prefix + ".count": records]
        } catch let error as BenchError {
            _ = sampler?.finish()
            throw error
        } catch {
            _ = sampler?.finish()
            throw storeError("replay", error)
        }
    }

    /// Reads the (page-cached) journal file in 1 MiB reads: what reading alone allows.
    static func pageCachedRead(path: String, records: Double) throws(BenchError) -> Figures {
        _ = try Files.readAll(path)
        let seconds = try Files.readAll(path)
        return ["read.records": records / seconds, "read.mbps": Double(Files.size(path)) / seconds / 1e6]
    }

    // MARK: 7. Opening a store

    /// Opens a store on `path` (a copy of the journal, so the store's repair
    /// and preallocation never change the source), times it, and reads the
    /// heap in use above what it was before while the store is still open.
    static func open(path: String, prefix: String) async throws(BenchError) -> Figures {
        let work = path + ".open"
        Files.remove(work)
        defer { Files.remove(work) }
        try Files.copy(path, to: work)
        _ = try Files.readAll(work)
        let heapBefore = HeapSampler.inUse()
        do {
            let start = Clock.now()
            let store = try await LocalStore.open(path: work, options: storeOptions(PosixSystemCalls()))
            let seconds = Clock.now() - start
            let heapAfter = HeapSampler.inUse()
            guard case .ready = await store.status else { throw BenchError("open: the store did not open ready: \(await store.status)") }
            let records = Double(store.recovery?.recordCount ?? 0)
            try await store.close()
            return [prefix + ".seconds": seconds, prefix + ".heap": Double(max(0, heapAfter - heapBefore)) / 1_048_576,
                    prefix + ".records": records, prefix + ".bytes": Double(Files.size(path))]
        } catch let error as BenchError {
            throw error
        } catch {
            throw storeError("open", error)
        }
    }

    /// The journal at `source` rewritten as a checkpoint of its state, at `destination`.
    static func checkpointedCopy(of source: String, to destination: String) async throws(BenchError) {
        Files.remove(destination)
        try Files.copy(source, to: destination)
        do {
            let store = try await LocalStore.open(path: destination, options: storeOptions(PosixSystemCalls()))
            try await store.checkpoint()
            try await store.close()
        } catch {
            throw storeError("checkpointing \(destination)", error)
        }
    }

    /// Reads the (page-cached) file at `path` in 1 MiB reads: the time reading alone takes.
    static func pageCachedOpenRead(path: String, prefix: String) throws(BenchError) -> Figures {
        _ = try Files.readAll(path)
        return [prefix + ".seconds": try Files.readAll(path)]
    }

    // MARK: 5. Checkpoint

    /// Copies the journal at `source`, opens a store on the copy, and times
    /// its checkpoint (the rewrite of the live state).
    static func checkpoint(directory: String, source: String, prefix: String) async throws(BenchError) -> Figures {
        let path = directory + "/checkpoint-work.journal"
        Files.remove(path)
        defer { Files.remove(path) }
        try Files.copy(source, to: path)
        do {
            let store = try await LocalStore.open(path: path, options: storeOptions(PosixSystemCalls()))
            let before = Double(Files.size(path))
            let start = Clock.now()
            try await store.checkpoint()
            let seconds = Clock.now() - start
            let after = Double(Files.size(path))
            try await store.close()
            return [prefix + ".seconds": seconds, prefix + ".mbps": after / seconds / 1e6,
                    prefix + ".before": before, prefix + ".after": after]
        } catch {
            throw storeError("checkpoint", error)
        }
    }

    /// Writes `bytes` sequentially and fsyncs: the disk's rate for a file of that size.
    static func sequentialWrite(directory: String, bytes: Int) throws(BenchError) -> Figures {
        let seconds = try RawFile.sequentialWrite(path: directory + "/sequential.bin", bytes: bytes)
        return ["sequential.mbps": Double(bytes) / seconds / 1e6]
    }

    // MARK: 6. Push to the reference server

    /// Samples resident memory every `every` mutations pushed.
    actor Sampler: SyncTransport {
        let base: any SyncTransport
        let every: Int
        var pushed = 0
        var samples: [Double] = []
        init(base: any SyncTransport, every: Int) {
            self.base = base
            self.every = max(1, every)
        }
        func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
            let results = try await base.push(mutations)
            let before = pushed / every
            pushed += mutations.count
            if pushed / every != before { samples.append(Double(HeapSampler.inUse()) / 1_048_576) }
            return results
        }
        func pull(_ request: PullRequest) async throws(TransportError) -> PullPage { try await base.pull(request) }
    }

    /// A server stand-in that applies everything and keeps nothing, so memory shows the device alone.
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

    /// Seeds a reference server with `count` rows, writes a device journal
    /// that knows them and queues an update of each, then pushes the queue
    /// to the server (ops/s) and, from a copy, to a stand-in that keeps
    /// nothing (the device's own rate and memory, sampled every 10 %).
    static func push(directory: String, count: Int) async throws(BenchError) -> Figures {
        let path = directory + "/push.journal"
        let devicePath = directory + "/push-device.journal"
        defer {
            Files.remove(path)
            Files.remove(devicePath)
        }
        let server = ReferenceServer()
        var rows: [ServerRow] = []
        rows.reserveCapacity(count)
        for n in 0..<count {
            rows.append(await server.write(user: "u1", kind: "item", id: Records.recordID(n), fields: Records.fields(n, text: "server copy")))
        }
        let updates = rows.lazy.enumerated().map { n, row -> StoreEvent in
            .edit(JournalOperation(id: .random(), kind: .update, entity: "item", recordID: row.id,
                                   fields: ["text": .string(Records.text)], baseUpdatedAt: row.updatedAt,
                                   queuedAt: Records.stamp + Int64(n)), compaction: [])
        }
        try await writeJournal(path: path, events: AnySequence(pulledPages(rows)).concatenated(with: updates))
        rows = []
        try Files.copy(path, to: devicePath)

        var figures: Figures = [:]
        for (target, transport) in [(path, server.transport(user: "u1") as any SyncTransport), (devicePath, AcknowledgingTransport())] {
            let device = target == devicePath
            do {
                let store = try await LocalStore.open(path: target, options: storeOptions(PosixSystemCalls()))
                let sampler = Sampler(base: transport, every: count / 10)
                let engine = SyncEngine(store: store, transport: sampler, options: .init(kinds: [], batchSize: 500))
                let start = Clock.now()
                let cpuStart = SystemClock.processCPUNanoseconds()
                let outcome = await engine.sync()
                let seconds = Clock.now() - start
                let cpuPerOperation = Double(SystemClock.processCPUNanoseconds() - cpuStart) / 1_000 / Double(count)
                // Sampled at each tenth pushed (no sampling thread: it would slow the push).
                let peak = max(await sampler.samples.max() ?? 0, Double(HeapSampler.inUse()) / 1_048_576)
                let left = try await store.outboxOperations().count
                try await store.close()
                guard outcome == .ok(pushed: count, pulled: 0, conflicts: 0), left == 0 else {
                    throw BenchError("push: \(outcome), \(left) operations left")
                }
                if device {
                    let samples = await sampler.samples
                    figures["push-device.ops"] = Double(count) / seconds
                    figures["push-device.peak"] = peak
                    figures["push-device.growth"] = (samples.last ?? 0) - (samples.first ?? 0)
                    figures["push-device.cpu"] = cpuPerOperation
                } else {
                    figures["push.ops"] = Double(count) / seconds
                    figures["push.peak"] = peak
                    figures["push.cpu"] = cpuPerOperation
                }
            } catch let error as BenchError {
                throw error
            } catch {
                throw storeError("push", error)
            }
        }
        return figures
    }
}

extension AnySequence {
    /// This sequence followed by `other`.
    func concatenated<S: Sequence>(with other: S) -> AnySequence<Element> where S.Element == Element {
        AnySequence(sequence(state: (makeIterator(), other.makeIterator(), false)) { state -> Element? in
            if !state.2, let next = state.0.next() { return next }
            state.2 = true
            return state.1.next()
        })
    }
}

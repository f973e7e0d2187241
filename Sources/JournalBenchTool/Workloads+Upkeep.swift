import SyncJournalPlatform
import SyncJournalCore
import SyncJournalStore

extension Workloads {
    // MARK: 10. Upkeep: a journal that never just grows

    /// `liveRecords` records, then `edits` updates of them at random by
    /// `editors` concurrent editors through one store with the default
    /// upkeep policy and no checkpoint call. Measures the journal against
    /// the size of a fresh checkpoint of the same state (at the end, and the
    /// largest seen while editing), the time to open each, and each edit's
    /// latency, split by whether an automatic checkpoint was being written
    /// when it began.
    static func upkeep(directory: String, edits: Int, liveRecords: Int, editors: Int) async throws(BenchError) -> Figures {
        let path = directory + "/upkeep.journal", fresh = directory + "/upkeep-fresh.journal"
        func removeAll() {
            for file in [path, fresh] {
                Files.remove(file)
                Files.remove(file + ".checkpoint")
            }
        }
        removeAll()
        defer { removeAll() }
        let outcome: (during: [Double], without: [Double], largest: Int64, checkpoints: Int)
        do {
            let store = try await LocalStore.open(path: path, options: LocalStore.Options(system: PosixSystemCalls()))
            let failed = await createConcurrently(liveRecords, editors: editors, through: store)
            if failed > 0 { throw BenchError("upkeep: \(failed) creates failed") }
            let next = Counter()
            let perEditor = await withTaskGroup(of: (during: [Double], without: [Double], largest: Int64).self) { group in
                for editor in 0..<editors {
                    group.addTask {
                        var random = SeededGenerator(seed: UInt64(editor + 1))
                        var during: [Double] = [], without: [Double] = []
                        var largest: Int64 = 0
                        while let n = next.take(below: edits) {
                            let checkpointing = await store.isCheckpointing
                            let record = Records.recordID(Int.random(in: 0..<liveRecords, using: &random))
                            let began = Clock.now()
                            do { try await store.update("item", id: record, changes: Records.fields(n)) } catch {
                                next.failures.add(1, ordering: .relaxed)
                            }
                            let latency = Clock.now() - began
                            if checkpointing { during.append(latency) } else { without.append(latency) }
                            if n % 256 == 0 { largest = max(largest, await store.journalBytes) }
                        }
                        return (during, without, largest)
                    }
                }
                var all: (during: [Double], without: [Double], largest: Int64) = ([], [], 0)
                for await part in group {
                    all.during += part.during
                    all.without += part.without
                    all.largest = max(all.largest, part.largest)
                }
                return all
            }
            let failures = next.failures.load(ordering: .relaxed)
            if failures > 0 { throw BenchError("upkeep: \(failures) updates failed") }
            let checkpoints = await store.automaticCheckpoints
            try await store.close()
            outcome = (perEditor.during, perEditor.without, perEditor.largest, checkpoints)
        } catch let error as BenchError {
            throw error
        } catch {
            throw storeError("upkeep", error)
        }
        // The same state, freshly checkpointed: what the live state takes.
        try await checkpointedCopy(of: path, to: fresh)
        let journalBytes = Double(Files.size(path)), liveBytes = Double(max(1, Files.size(fresh)))
        // Opening a few MB takes tens of milliseconds: the two are timed in
        // turn, seven times each, and the medians compared.
        var journalOpens: [Double] = [], freshOpens: [Double] = []
        for _ in 0..<7 {
            journalOpens.append(try await open(path: path, prefix: "upkeep-open")["upkeep-open.seconds"] ?? 0)
            freshOpens.append(try await open(path: fresh, prefix: "upkeep-fresh-open")["upkeep-fresh-open.seconds"] ?? 0)
        }
        let openJournal = Statistics.median(journalOpens), openFresh = Statistics.median(freshOpens)
        // Where the journal left happens to end in the checkpoint cycle is
        // chance: the journal just short of the policy's next checkpoint is
        // the slowest one a user can meet, so it is timed too.
        let largest = directory + "/upkeep-largest.journal"
        defer {
            Files.remove(largest)
            Files.remove(largest + ".checkpoint")
        }
        let largestRecords = try await journalShortOfCheckpoint(from: fresh, at: largest, liveRecords: liveRecords, editors: editors)
        var largestOpens: [Double] = [], freshAgain: [Double] = []
        for _ in 0..<7 {
            largestOpens.append(try await open(path: largest, prefix: "upkeep-largest-open")["upkeep-largest-open.seconds"] ?? 0)
            freshAgain.append(try await open(path: fresh, prefix: "upkeep-fresh-open")["upkeep-fresh-open.seconds"] ?? 0)
        }
        let p99During = Statistics.quantile(outcome.during, 0.99) * 1e6
        let p99Without = Statistics.quantile(outcome.without, 0.99) * 1e6
        return ["upkeep.size": journalBytes / liveBytes,
                "upkeep.largest": Double(outcome.largest) / liveBytes,
                "upkeep.live": liveBytes,
                "upkeep.open": openJournal, "upkeep.fresh-open": openFresh,
                "upkeep.largest-open": Statistics.median(largestOpens), "upkeep.largest-fresh-open": Statistics.median(freshAgain),
                "upkeep.largest-records": Double(largestRecords),
                "upkeep.p99-during": p99During, "upkeep.p99-without": p99Without,
                "upkeep.edits-during": Double(outcome.during.count),
                "upkeep.checkpoints": Double(outcome.checkpoints)]
    }

    /// A copy of the checkpoint at `fresh`, at `path`, with updates at
    /// random appended (upkeep off) until one more would make the default
    /// policy checkpoint it: the largest journal of that state a store
    /// under the default policy opens. Returns the records appended.
    static func journalShortOfCheckpoint(from fresh: String, at path: String, liveRecords: Int, editors: Int) async throws(BenchError) -> Int {
        Files.remove(path)
        try Files.copy(fresh, to: path)
        let liveBytes = Files.size(fresh)
        do {
            let store = try await LocalStore.open(path: path, options: storeOptions(PosixSystemCalls()))
            let policy = LocalStore.UpkeepPolicy.standard
            var appended = 0
            var random = SeededGenerator(seed: 0x5EED)
            // One record per update, so the record rule is checked by count;
            // a record is ~400 bytes here, so the byte rule comes first.
            while true {
                let bytes = await store.journalBytes
                let perRecord = appended == 0 ? 0 : (bytes - liveBytes) / Int64(appended)
                if policy.isDue(journalBytes: bytes + perRecord, journalRecords: appended + 1, liveBytes: liveBytes, liveItems: liveRecords) { break }
                let record = Records.recordID(Int.random(in: 0..<liveRecords, using: &random))
                try await store.update("item", id: record, changes: Records.fields(appended))
                appended += 1
            }
            try await store.close()
            return appended
        } catch {
            throw storeError("upkeep: the journal short of a checkpoint", error)
        }
    }
}

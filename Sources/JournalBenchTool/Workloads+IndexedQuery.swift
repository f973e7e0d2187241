import SyncJournalCore
import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalStore

extension Workloads {
    // MARK: 9. Indexed query

    /// The field values of record `n` of the query workload: one record in
    /// `records / matching` has `list` (indexed) and `group` (not indexed)
    /// equal to `"target"`, so each query returns `matching` records.
    static func queryFields(_ n: Int, records: Int, matching: Int) -> [String: FieldValue] {
        let value: FieldValue = n % max(1, records / matching) == 0 ? .string("target") : .string("list-\(n % 997)")
        return ["list": value, "group": value, "title": .string("note \(n)"), "due": .int(Int64(n))]
    }

    /// Writes a journal of `records` pulled notes (pages of 5,000 rows, one write each).
    static func queryJournal(path: String, records: Int, matching: Int) async throws(BenchError) {
        Files.remove(path)
        do {
            let store = try await LocalStore.open(path: path, options: storeOptions(PosixSystemCalls()))
            var start = 0
            while start < records {
                let end = min(records, start + 5_000)
                let rows = (start..<end).map { n in
                    ServerRow(kind: "note", id: Records.recordID(n), fields: queryFields(n, records: records, matching: matching),
                              updatedAt: Int64(n + 1), deletedAt: nil)
                }
                try await store.applyPulledPage(kind: "note", rows: rows, cursor: nil)
                start = end
            }
            try await store.close()
        } catch {
            throw storeError("writing the query journal", error)
        }
    }

    /// Opens the journal at `path` without indexes, then with an index of
    /// `list`, and times the same selection of `matching` records by the
    /// indexed field and by an unindexed one (a scan of the kind).
    static func indexedQuery(path: String, matching: Int) async throws(BenchError) -> Figures {
        do {
            let plainStart = Clock.now()
            let plain = try await LocalStore.open(path: path, options: storeOptions(PosixSystemCalls()))
            let plainSeconds = Clock.now() - plainStart
            try await plain.close()

            var options = storeOptions(PosixSystemCalls())
            options.indexes = [FieldIndex(kind: "note", field: "list")]
            let indexedStart = Clock.now()
            let store = try await LocalStore.open(path: path, options: options)
            let indexedSeconds = Clock.now() - indexedStart

            let byIndex = Query("note").filter(Field("list") == "target")
            let byScan = Query("note").filter(Field("group") == "target")
            let indexedRuns = 200, scanRuns = 5
            var found = 0
            let indexedBegan = Clock.now()
            for _ in 0..<indexedRuns { found = try await store.fetch(byIndex).count }
            let indexedQuery = (Clock.now() - indexedBegan) / Double(indexedRuns)
            var scanned = 0
            let scanBegan = Clock.now()
            for _ in 0..<scanRuns { scanned = try await store.fetch(byScan).count }
            let scanQuery = (Clock.now() - scanBegan) / Double(scanRuns)
            try await store.close()
            guard found == matching, scanned == matching else {
                throw BenchError("indexed query: \(found) records by the index and \(scanned) by a scan, expected \(matching)")
            }
            return ["query.indexed": 1 / indexedQuery, "query.scan": 1 / scanQuery,
                    "query.open-indexed": indexedSeconds, "query.open-plain": plainSeconds]
        } catch let error as BenchError {
            throw error
        } catch {
            throw storeError("indexed query", error)
        }
    }
}

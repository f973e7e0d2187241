import Observation
import SyncJournal
import SyncJournalTesting
import Testing

/// Observed queries, driven through a sync engine and the in-memory
/// reference server. Every step waits for the change it makes to be durable
/// (the call returns), then asks the observation for its next results: a
/// reader that was not waiting gets the results after the change.
@Suite("Query observation: current results, then every change that alters them", .timeLimit(.minutes(5)))
struct QueryObservationTests {
    static let inbox = Query("note").filter(Field("list") == "inbox").order(Field("title"))

    static func withStore(maximumPermanentFailures: Int = 3,
                          _ body: (LocalStore, ReferenceServer, FaultInjectingTransport, String) async throws -> Void) async throws {
        let directory = try TemporaryDirectory(prefix: "query-observation")
        defer { directory.remove() }
        var options = LocalStore.Options(upkeep: .off, maximumPermanentFailures: maximumPermanentFailures)
        options.indexes = [FieldIndex(kind: "note", field: "list")]
        let path = directory.file("notes.journal")
        let store = try await LocalStore.open(path: path, options: options)
        let server = ReferenceServer()
        let transport = FaultInjectingTransport(server.transport(user: "u1"))
        try await body(store, server, transport, path)
        try await store.close()
    }

    static func titles(_ records: [StoreRecord]?) -> [String] {
        (records ?? []).map { if case .string(let title) = $0.fields["title"] { return title } else { return "?" } }
    }

    @Test("an observation yields the current results first, then the results after a local edit")
    func localEdit() async throws {
        try await Self.withStore { store, _, _, _ in
            try await store.create("note", id: "n1", fields: ["list": "inbox", "title": "Buy milk"])
            var results = store.observe(Self.inbox).makeAsyncIterator()
            #expect(Self.titles(await results.next()) == ["Buy milk"])
            try await store.create("note", id: "n2", fields: ["list": "inbox", "title": "Call Ana"])
            let next = await results.next()
            #expect(Self.titles(next) == ["Buy milk", "Call Ana"])
            #expect(next?.allSatisfy(\.hasPendingChanges) == true)
        }
    }

    @Test("an observation yields the results after a pull brings a server row into them")
    func pull() async throws {
        try await Self.withStore { store, server, transport, _ in
            var results = store.observe(Self.inbox).makeAsyncIterator()
            #expect(await results.next() == [])
            _ = await server.write(user: "u1", kind: "note", id: "s1", fields: ["list": "inbox", "title": "From the web"])
            let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["note"]))
            #expect(await engine.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
            let next = await results.next()
            #expect(Self.titles(next) == ["From the web"])
            #expect(next?.first?.hasPendingChanges == false)
        }
    }

    @Test("an observation yields the results after the server acknowledges a held push: no longer pending, with the server's stamp")
    func acknowledgement() async throws {
        try await Self.withStore { store, _, transport, _ in
            try await store.create("note", id: "n1", fields: ["list": "inbox", "title": "Buy milk"])
            var results = store.observe(Self.inbox).makeAsyncIterator()
            #expect(await results.next()?.first?.hasPendingChanges == true)
            let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["note"]))
            await transport.holdNextRequest(.push)
            let sync = Task { await engine.sync() }
            await transport.waitUntilHeld()
            // Held: the push has left, no reply yet, so the record is still pending.
            #expect(try await store.fetch(Self.inbox).first?.hasPendingChanges == true)
            await transport.releaseHeld()
            _ = await sync.value
            let next = await results.next()
            #expect(next?.first?.hasPendingChanges == false)
            #expect(next?.first?.serverUpdatedAt != nil)
        }
    }

    @Test("an observation yields the results after a conflict is resolved by the kind's policy (server wins)")
    func conflict() async throws {
        try await Self.withStore { store, server, transport, _ in
            _ = await server.write(user: "u1", kind: "note", id: "n1", fields: ["list": "inbox", "title": "Draft"])
            let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["note"]))
            _ = await engine.sync()
            try await store.update("note", id: "n1", changes: ["title": "Mine"])
            var results = store.observe(Self.inbox).makeAsyncIterator()
            #expect(Self.titles(await results.next()) == ["Mine"])
            _ = await server.update(kind: "note", id: "n1", changes: ["title": "Theirs"])
            _ = await engine.sync()
            #expect(try await store.conflicts().count == 1)
            #expect(Self.titles(await results.next()) == ["Theirs"])
        }
    }

    @Test("an observation yields the results after an operation is quarantined (its record disappears) and after it is retried")
    func quarantine() async throws {
        try await Self.withStore(maximumPermanentFailures: 1) { store, server, transport, _ in
            try await store.create("note", id: "n1", fields: ["list": "inbox", "title": "Refused"])
            var results = store.observe(Self.inbox).makeAsyncIterator()
            #expect(Self.titles(await results.next()) == ["Refused"])
            await server.rejectPermanently(kind: "note", id: "n1")
            let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["note"]))
            _ = await engine.sync()
            let quarantined = try await store.quarantinedOperations()
            #expect(quarantined.count == 1)
            #expect(await results.next() == [])
            try await store.retryQuarantined(quarantined[0].operation.id)
            #expect(Self.titles(await results.next()) == ["Refused"])
        }
    }

    @Test("observing a reopened store yields the state replayed from the journal first")
    func reopen() async throws {
        let directory = try TemporaryDirectory(prefix: "query-observation-reopen")
        defer { directory.remove() }
        let path = directory.file("notes.journal")
        var options = LocalStore.Options(upkeep: .off)
        options.indexes = [FieldIndex(kind: "note", field: "list")]
        let first = try await LocalStore.open(path: path, options: options)
        try await first.create("note", id: "n1", fields: ["list": "inbox", "title": "Kept"])
        try await first.create("note", id: "n2", fields: ["list": "later", "title": "Elsewhere"])
        var old = first.observe(Self.inbox).makeAsyncIterator()
        #expect(Self.titles(await old.next()) == ["Kept"])
        try await first.close()
        #expect(await old.next() == nil)

        let second = try await LocalStore.open(path: path, options: options)
        var results = second.observe(Self.inbox).makeAsyncIterator()
        #expect(Self.titles(await results.next()) == ["Kept"])
        try await second.update("note", id: "n2", changes: ["list": "inbox"])
        #expect(Self.titles(await results.next()) == ["Elsewhere", "Kept"])
        try await second.close()
    }

    @Test("a reader that does not read while 1,000 edits happen never holds up the store, and then gets the latest results")
    func slowReader() async throws {
        try await Self.withStore { store, _, _, _ in
            var results = store.observe(Query("note").order(Field("n"))).makeAsyncIterator()
            #expect(await results.next() == [])
            // 1,000 edits from concurrent editors (shared writes and syncs); all
            // of them return while the reader reads nothing: none waited for it.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<1_000 {
                    group.addTask { try await store.create("note", id: "n\(n)", fields: ["n": .int(Int64(n))]) }
                }
                try await group.waitForAll()
            }
            let latest = await results.next()
            #expect(latest?.count == 1_000)
            #expect(latest?.last?.fields["n"] == 999)
            try await store.update("note", id: "n999", changes: ["n": 1_000])
            #expect(await results.next()?.last?.fields["n"] == 1_000)
        }
    }

    @Test("an observation ends when its store closes, and when the task reading it is cancelled")
    func ends() async throws {
        try await Self.withStore { store, _, _, _ in
            let (firstRead, signal) = AsyncStream<Void>.makeStream()
            let reader = Task {
                var count = 0
                for await _ in store.observe(Self.inbox) {
                    count += 1
                    signal.yield()
                }
                return count
            }
            var reads = firstRead.makeAsyncIterator()
            await reads.next()
            reader.cancel()
            #expect(await reader.value == 1)

            let (firstResults, got) = AsyncStream<Void>.makeStream()
            let waiting = Task {
                var results = store.observe(Self.inbox).makeAsyncIterator()
                let first = await results.next()
                got.yield()
                return (first, await results.next())
            }
            var gotFirst = firstResults.makeAsyncIterator()
            await gotFirst.next()
            try await store.close()
            let (first, afterClose) = await waiting.value
            #expect(first == [])
            #expect(afterClose == nil)
            var late = store.observe(Self.inbox).makeAsyncIterator()
            #expect(await late.next() == nil)
        }
    }

    @Test("a LiveQuery's records follow the query's results")
    @MainActor
    func liveQuery() async throws {
        let directory = try TemporaryDirectory(prefix: "live-query")
        defer { directory.remove() }
        let store = try await LocalStore.open(path: directory.file("notes.journal"))
        try await store.create("note", id: "n1", fields: ["list": "inbox", "title": "Buy milk"])
        let live = LiveQuery(Self.inbox, in: store)
        await Self.waitUntil(live) { Self.titles($0) == ["Buy milk"] }
        try await store.create("note", id: "n2", fields: ["list": "inbox", "title": "Call Ana"])
        await Self.waitUntil(live) { Self.titles($0) == ["Buy milk", "Call Ana"] }
        #expect(live.query == Self.inbox)
        try await store.close()
    }

    /// Returns once `live.records` satisfies `condition`, woken by Observation's change tracking (no polling).
    @MainActor
    static func waitUntil(_ live: LiveQuery, _ condition: ([StoreRecord]) -> Bool) async {
        while !condition(live.records) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                withObservationTracking { _ = live.records } onChange: { continuation.resume() }
            }
        }
    }
}

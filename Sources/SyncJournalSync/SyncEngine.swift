import SyncJournalStore

/// Pushes a store's queued operations and pulls server changes through a
/// transport (the protocol of seed 002, made safe by the rules of seeds 000
/// and 003).
///
/// - One sync at a time: a call while a sync runs waits for it and shares its
///   outcome; there is never a parallel request.
/// - Push before pull: the outbox is the user's work; it goes first.
/// - Each round sends queued operations that are not in flight (the first of
///   each record only), journals that they may reach the server, and
///   acknowledges only what was sent; edits made meanwhile wait for the next
///   round. Rounds repeat until nothing is left to send.
/// - Pull pages until `hasMore` is false, stopping with an error after
///   ``Options/maximumPages`` (a cursor that does not advance is a server bug).
/// - Every result is journaled (by the store) before the view changes, and a
///   retired store stops the sync after any await.
///
/// ```swift
/// let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["pin"]))
/// switch await engine.sync() {
/// case .ok(let pushed, let pulled, let conflicts): …
/// case .skipped(.offline): …          // normal: the view keeps its data
/// case .error(let message): …
/// }
/// ```
public actor SyncEngine {
    /// Settings of an engine.
    public struct Options: Sendable {
        /// The kinds to pull.
        public var kinds: [String]
        /// Operations per push request.
        public var batchSize: Int
        /// Rows per pull page.
        public var pullLimit: Int
        /// Pages one sync may pull before it gives up.
        public var maximumPages: Int

        /// Options for pulling `kinds`.
        public init(kinds: [String], batchSize: Int = 100, pullLimit: Int = 500, maximumPages: Int = 50) {
            self.kinds = kinds
            self.batchSize = max(1, batchSize)
            self.pullLimit = max(1, pullLimit)
            self.maximumPages = max(1, maximumPages)
        }
    }

    /// The store this engine syncs.
    public nonisolated let store: LocalStore
    private let transport: any SyncTransport
    private var options: Options
    private var running: Task<SyncOutcome, Never>?

    /// An engine for `store` over `transport`.
    public init(store: LocalStore, transport: any SyncTransport, options: Options) {
        self.store = store
        self.transport = transport
        self.options = options
    }

    /// Changes the push batch size (for tests and the simulator).
    public func setBatchSize(_ size: Int) { options.batchSize = max(1, size) }

    /// Changes the pull page size.
    public func setPullLimit(_ limit: Int) { options.pullLimit = max(1, limit) }

    /// Runs one sync, or waits for the one running and returns its outcome.
    public func sync() async -> SyncOutcome {
        if let running { return await running.value }
        let task = Task {
            let outcome = await self.run()
            // Cleared by the sync itself, so a call after it ended starts a new one.
            self.finishRun()
            return outcome
        }
        running = task
        return await task.value
    }

    private func finishRun() { running = nil }

    private func run() async -> SyncOutcome {
        var pushed = 0
        var conflicts = 0
        // Operations tried in this sync and not finished (failed or refused):
        // not resent in this sync, and the rest of their record waits behind them.
        var attempted = Set<OperationID>()
        while true {
            let ready: [OutboxOperation]
            do { ready = try await store.operationsReadyToSend(limit: options.batchSize, excluding: attempted) } catch {
                return .error(error.description)
            }
            if ready.isEmpty { break }
            // Only what the store accepted as sent goes out: an operation the
            // user cancelled since `operationsReadyToSend` must not be sent.
            let sending: [OutboxOperation]
            do { sending = try await store.beginSending(ready.map(\.id)) } catch { return .error(error.description) }
            if sending.isEmpty { continue }
            let ids = sending.map(\.id)
            let newlyMarked = Set(ready.filter { !$0.sent }.map(\.id))
            let results: [MutationResult]
            do {
                results = try await transport.push(sending.map { Mutation($0.operation) })
            } catch {
                switch error {
                case .offline:
                    // Nothing left the device: undo this attempt's sent marks, so
                    // a skipped sync leaves the state as it was (and a create
                    // deleted later can still vanish without reaching the server).
                    do { try await store.withdrawSending(ids, newlyMarked: newlyMarked) } catch { return .error(error.description) }
                    return .skipped(.offline)
                case .transient(let reason, _):
                    await store.finishSending(ids)
                    for id in ids { try? await store.recordFailure(id, reason: reason, permanent: false) }
                    return .error(error.description)
                case .permanent:
                    await store.finishSending(ids)
                    return .error(error.description)
                }
            }
            if case .retired = await store.status { return .error(StoreError.retired.description) }
            // A reply is checked whole before any of it is kept.
            guard results.count == ids.count, Set(results.map(\.operationID)) == Set(ids) else {
                await store.finishSending(ids)
                return .error("malformed push reply: \(results.count) results for \(ids.count) mutations")
            }
            // The store checks every outcome before it keeps any, in one write.
            let outcomes: [(OperationID, LocalStore.DeliveryOutcome)] = results.map { result in
                switch result.outcome {
                case .applied(let row): return (result.operationID, .acknowledged(row))
                case .conflict(let server): return (result.operationID, .conflicted(server: server))
                case .rejected(let reason, let permanent): return (result.operationID, .failed(reason: reason, permanent: permanent))
                }
            }
            do {
                conflicts += try await store.recordOutcomes(outcomes)
            } catch {
                await store.finishSending(ids)
                return .error("malformed push reply: \(error)")
            }
            await store.finishSending(ids)
            for (id, outcome) in outcomes {
                if case .acknowledged = outcome { pushed += 1 } else { attempted.insert(id) }
            }
        }

        var pulled = 0
        var cursors: [String: PullCursor?]
        do { cursors = try await store.cursors(for: options.kinds) } catch { return .error(error.description) }
        guard !options.kinds.isEmpty else { return .ok(pushed: pushed, pulled: 0, conflicts: conflicts) }
        var pages = 0
        while true {
            if pages == options.maximumPages {
                return .error("pull did not finish after \(pages) pages; the server's cursor is not advancing")
            }
            let page: PullPage
            do {
                page = try await transport.pull(PullRequest(cursors: cursors, limit: options.pullLimit))
            } catch {
                switch error {
                case .offline: return .skipped(.offline)
                default: return .error(error.description)
                }
            }
            if case .retired = await store.status { return .error(StoreError.retired.description) }
            let grouped: [LocalStore.PulledKindPage]
            do { grouped = try Self.validate(page, cursors: cursors, limit: options.pullLimit) } catch {
                return .error(error.description)
            }
            do { try await store.applyPulledPages(grouped) } catch { return .error(error.description) }
            for kindPage in grouped { if let cursor = kindPage.cursor { cursors[kindPage.kind] = .some(cursor) } }
            pulled += page.rows.count
            pages += 1
            if !page.hasMore { break }
        }
        return .ok(pushed: pushed, pulled: pulled, conflicts: conflicts)
    }

    /// A pull reply that does not make sense, refused before anything is kept.
    public struct MalformedPage: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public var reason: String
        /// `malformed pull reply: …`.
        public var description: String { "malformed pull reply: \(reason)" }
    }

    /// Splits a page by kind and checks it: only requested kinds, no more rows
    /// than asked, rows in `(updatedAt, id)` order after the kind's cursor, and
    /// each kind's next cursor equal to its last row.
    static func validate(_ page: PullPage, cursors: [String: PullCursor?], limit: Int) throws(MalformedPage) -> [LocalStore.PulledKindPage] {
        if page.rows.count > limit { throw MalformedPage(reason: "\(page.rows.count) rows for a limit of \(limit)") }
        var byKind: [String: [ServerRow]] = [:]
        var order: [String] = []
        for row in page.rows {
            guard cursors.keys.contains(row.kind) else { throw MalformedPage(reason: "row of kind \"\(row.kind)\" that was not asked for") }
            if byKind[row.kind] == nil { order.append(row.kind) }
            byKind[row.kind, default: []].append(row)
        }
        for kind in page.nextCursors.keys where byKind[kind] == nil {
            guard cursors.keys.contains(kind) else { throw MalformedPage(reason: "cursor for kind \"\(kind)\" that was not asked for") }
        }
        var result: [LocalStore.PulledKindPage] = []
        for kind in order {
            let rows = byKind[kind]!
            var previous: PullCursor? = cursors[kind] ?? nil
            for row in rows {
                let position = PullCursor(updatedAt: row.updatedAt, id: row.id)
                if let previous, !(previous < position) {
                    throw MalformedPage(reason: "\(kind) rows out of order or not after the cursor at \(position)")
                }
                previous = position
            }
            guard let next = page.nextCursors[kind], next == previous else {
                throw MalformedPage(reason: "\(kind) next cursor does not match its last row")
            }
            result.append(LocalStore.PulledKindPage(kind: kind, rows: rows, cursor: next))
        }
        return result
    }
}

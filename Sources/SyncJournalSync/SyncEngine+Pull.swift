import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore

// Pulling: pages of server changes by cursor, checked before any is kept,
// and the resync of a kind whose cursor the server no longer honours.
extension SyncEngine {
    func pull(pushed: Int, conflicts: Int) async -> SyncOutcome {
        var pulled = 0
        let allCursors: [String: PullCursor?]
        do { allCursors = try await outbox.cursors(for: options.kinds) } catch { return .failed(.store(error)) }
        guard !options.kinds.isEmpty else { return .ok(pushed: pushed, pulled: 0, conflicts: conflicts) }
        var pages = 0
        var resynced = Set<String>()
        // One pull names at most so many kinds: more are pulled in groups,
        // each to its last page, one group after another.
        let kinds = allCursors.keys.sorted()
        for start in stride(from: 0, to: kinds.count, by: ProtocolLimits.maximumKindsPerPull) {
            let group = kinds[start..<min(kinds.count, start + ProtocolLimits.maximumKindsPerPull)]
            var cursors = Dictionary(uniqueKeysWithValues: group.map { ($0, allCursors[$0] ?? nil) })
            while true {
                if let stop = stopBeforeNextRequest() { return stop }
                if pages == options.maximumPages {
                    return .failed(.pullNotFinished(.pageLimit(pages: pages)))
                }
                let expectation: ServerExpectation?
                do { expectation = try await outbox.knownServer().expectation } catch { return .failed(.store(error)) }
                let page: PullPage
                do {
                    page = try await transport.pull(PullRequest(cursors: cursors, limit: options.pullLimit, expectation: expectation))
                } catch {
                    switch error {
                    case .serverMismatch(let mismatch): return await stopForMismatch(mismatch)
                    case .offline: return .skipped(.offline)
                    case .transient(let reason, let after): return .retryLater(reason: reason, retryAfterMilliseconds: after)
                    case .serverUnreachable:
                        statusState.serverUnreachableThisSync = true
                        return .retryLater(reason: error.description, retryAfterMilliseconds: nil)
                    case .unauthorized(let reason): return .failed(.authentication(reason: reason))
                    case .cursorExpired(let kinds):
                        // Each kind is resynced at most once per sync: a server that
                        // keeps refusing a fresh cursor is a server bug, not a loop.
                        let expired = kinds.filter { cursors.keys.contains($0) && !resynced.contains($0) }
                        if expired.isEmpty { return .failed(.pullNotFinished(.cursorExpiredAgain(kinds: kinds))) }
                        for kind in expired.sorted() {
                            switch await resync(kind) {
                            case .success(let result):
                                cursors[kind] = .some(result.cursor)
                                pulled += result.rows
                            case .failure(let stop):
                                return stop.outcome
                            }
                            resynced.insert(kind)
                        }
                        continue
                    default: return .failed(.transport(error))
                    }
                }
                if case .retired = await outbox.status { return .failed(.store(.retired)) }
                let grouped: [LocalStore.PulledKindPage]
                do { grouped = try Self.validate(page, cursors: cursors, limit: options.pullLimit) } catch {
                    return .failed(.malformedReply(.pullPage(reason: error.reason)))
                }
                if let stop = await checkServer(of: page) { return stop }
                do { try await outbox.applyPulledPages(grouped) } catch { return .failed(.store(error)) }
                for kindPage in grouped { if let cursor = kindPage.cursor { cursors[kindPage.kind] = .some(cursor) } }
                pulled += page.rows.count
                pages += 1
                if !page.hasMore { break }
            }
        }
        return .ok(pushed: pushed, pulled: pulled, conflicts: conflicts)
    }

    /// Why a resync stopped.
    struct ResyncStop: Error {
        var outcome: SyncOutcome
    }

    /// Re-pulls every row of `kind` from the start and replaces the kind's
    /// snapshot with them, in one journal write; queued edits stay on top.
    private func resync(_ kind: String) async -> Result<(cursor: PullCursor?, rows: Int), ResyncStop> {
        var cursor: PullCursor?
        var rows: [String: ServerRow] = [:]
        var pages = 0
        while true {
            if let stop = stopBeforeNextRequest() { return .failure(ResyncStop(outcome: stop)) }
            if pages == options.maximumResyncPages {
                return .failure(ResyncStop(outcome: .failed(.pullNotFinished(.resyncPageLimit(kind: kind, pages: pages)))))
            }
            let page: PullPage
            let expectation: ServerExpectation?
            do { expectation = try await outbox.knownServer().expectation } catch {
                return .failure(ResyncStop(outcome: .failed(.store(error))))
            }
            do {
                page = try await transport.pull(PullRequest(cursors: [kind: cursor], limit: options.pullLimit, isResync: true,
                                                            expectation: expectation))
            } catch {
                switch error {
                case .serverMismatch(let mismatch): return .failure(ResyncStop(outcome: await stopForMismatch(mismatch)))
                case .offline: return .failure(ResyncStop(outcome: .skipped(.offline)))
                case .transient(let reason, let after): return .failure(ResyncStop(outcome: .retryLater(reason: reason, retryAfterMilliseconds: after)))
                case .serverUnreachable: return .failure(ResyncStop(outcome: .retryLater(reason: error.description, retryAfterMilliseconds: nil)))
                case .unauthorized(let reason): return .failure(ResyncStop(outcome: .failed(.authentication(reason: reason))))
                default: return .failure(ResyncStop(outcome: .failed(.pullNotFinished(.resyncRefused(kind: kind, error)))))
                }
            }
            let grouped: [LocalStore.PulledKindPage]
            do { grouped = try Self.validate(page, cursors: [kind: cursor], limit: options.pullLimit) } catch {
                return .failure(ResyncStop(outcome: .failed(.malformedReply(.pullPage(reason: error.reason)))))
            }
            if let stop = await checkServer(of: page) { return .failure(ResyncStop(outcome: stop)) }
            for kindPage in grouped {
                // A row changed during the re-pull appears again later: the later copy wins.
                for row in kindPage.rows { rows[row.id] = row }
                if let next = kindPage.cursor { cursor = next }
            }
            pages += 1
            if !page.hasMore { break }
        }
        let sorted = rows.values.sorted { PullCursor(updatedAt: $0.updatedAt, id: $0.id) < PullCursor(updatedAt: $1.updatedAt, id: $1.id) }
        do { try await outbox.replaceSnapshot(kind: kind, rows: sorted, cursor: cursor) } catch {
            return .failure(ResyncStop(outcome: .failed(.store(error))))
        }
        return .success((cursor, sorted.count))
    }

    /// A pull reply that does not make sense, refused before anything is kept.
    struct MalformedPage: Error, Sendable, Hashable {
        /// What is wrong.
        var reason: String
    }

    /// Splits a page by kind and checks it: only requested kinds, no more rows
    /// than asked, rows the store can keep (``LocalStore/problem(with:)``), in
    /// `(updatedAt, id)` order after the kind's cursor, no id twice, and each
    /// kind's next cursor equal to its last row.
    static func validate(_ page: PullPage, cursors: [String: PullCursor?], limit: Int) throws(MalformedPage) -> [LocalStore.PulledKindPage] {
        if page.rows.count > limit { throw MalformedPage(reason: "\(page.rows.count) rows for a limit of \(limit)") }
        var byKind: [String: [ServerRow]] = [:]
        var order: [String] = []
        for row in page.rows {
            guard cursors.keys.contains(row.kind) else { throw MalformedPage(reason: "row of kind \"\(row.kind)\" that was not asked for") }
            // Checked here, not only by the store: a resync keeps its pages in memory until the last one.
            if let problem = LocalStore.problem(with: row) { throw MalformedPage(reason: "\(row.kind) row \"\(row.id)\": \(problem)") }
            if byKind[row.kind] == nil { order.append(row.kind) }
            byKind[row.kind, default: []].append(row)
        }
        var result: [LocalStore.PulledKindPage] = []
        for kind in page.nextCursors.keys.sorted() where byKind[kind] == nil {
            guard cursors.keys.contains(kind) else { throw MalformedPage(reason: "cursor for kind \"\(kind)\" that was not asked for") }
            // A last page may move a cursor past what the server no longer has (purged tombstones); never back.
            let next = page.nextCursors[kind]!
            let current: PullCursor? = cursors[kind] ?? nil
            if let current, next < current { throw MalformedPage(reason: "\(kind) cursor \(next) moves back from \(current)") }
            if !page.hasMore, current.map({ $0 < next }) ?? true {
                result.append(LocalStore.PulledKindPage(kind: kind, rows: [], cursor: next))
            }
        }
        for kind in order {
            let rows = byKind[kind]!
            var previous: PullCursor? = cursors[kind] ?? nil
            var ids = Set<String>()
            for row in rows {
                let position = PullCursor(updatedAt: row.updatedAt, id: row.id)
                if let previous, !(previous < position) {
                    throw MalformedPage(reason: "\(kind) rows out of order or not after the cursor at \(position)")
                }
                // A page is one read of the server: a row appears in it once
                // (a row changed during a resync appears again on a later page).
                if !ids.insert(row.id).inserted { throw MalformedPage(reason: "\(kind) row \"\(row.id)\" twice in one page") }
                previous = position
            }
            // The cursor is the last row's position; only a last page may go beyond it (see PullPage.nextCursors).
            guard let next = page.nextCursors[kind], let last = previous, next == last || (!page.hasMore && last < next) else {
                throw MalformedPage(reason: "\(kind) next cursor does not match its last row")
            }
            result.append(LocalStore.PulledKindPage(kind: kind, rows: rows, cursor: next))
        }
        return result
    }
}

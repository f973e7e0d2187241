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
            // The shared spaces the device holds, with this group's cursors in
            // each; a space it does not name is pulled from its beginning.
            var spaces: [SpaceID: SpaceCursors]?
            if options.followsSharedSpaces {
                do { spaces = try await outbox.spaceCursors(for: Array(group)) } catch { return .failed(.store(error)) }
            }
            while true {
                if let stop = stopBeforeNextRequest() { return stop }
                if pages == options.maximumPages {
                    return .failed(.pullNotFinished(.pageLimit(pages: pages)))
                }
                let expectation: ServerExpectation?
                do { expectation = try await outbox.knownServer().expectation } catch { return .failed(.store(error)) }
                let page: PullPage
                do {
                    page = try await transport.pull(PullRequest(cursors: cursors, limit: options.pullLimit, expectation: expectation,
                                                                spaces: spaces))
                } catch {
                    if let outcome = stopForNow(error) { return outcome }
                    switch error {
                    case .serverMismatch(let mismatch): return await stopForMismatch(mismatch)
                    case .cursorExpired(let kinds):
                        // Each kind is resynced at most once per sync: a server that
                        // keeps refusing a fresh cursor is a server bug, not a loop.
                        let expired = kinds.filter { cursors.keys.contains($0) && !resynced.contains($0) }
                        if expired.isEmpty { return .failed(.pullNotFinished(.cursorExpiredAgain(kinds: kinds))) }
                        for kind in expired.sorted() {
                            switch await resync(kind, spaces: spaces) {
                            case .success(let result):
                                cursors[kind] = .some(result.cursor)
                                for (space, cursor) in result.spaceCursors { spaces?[space]?.cursors[kind] = .some(cursor) }
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
                do { grouped = try Self.validate(page, cursors: cursors, spaces: spaces, limit: options.pullLimit) } catch {
                    return .failed(.malformedReply(.pullPage(reason: error.reason)))
                }
                if let stop = await checkServer(of: page) { return stop }
                if spaces != nil {
                    // Descriptions and losses first, so the rows of a space
                    // just joined have their space, and a lost space's are gone.
                    do { try await outbox.applySpaces(described: page.spaces, lost: page.lostSpaces) } catch {
                        return .failed(.store(error))
                    }
                    noteDescribed(page.spaces)
                    for space in page.spaces {
                        let held = spaces?[space.id]?.cursors ?? Dictionary(uniqueKeysWithValues: group.map { ($0, nil) })
                        spaces?[space.id] = SpaceCursors(version: space.version, cursors: held)
                    }
                    for space in page.lostSpaces {
                        if spaces?.removeValue(forKey: space) != nil { noteLost([space]) }
                    }
                }
                do { try await outbox.applyPulledPages(grouped) } catch { return .failed(.store(error)) }
                for kindPage in grouped {
                    guard let cursor = kindPage.cursor else { continue }
                    if kindPage.space.isPersonal { cursors[kindPage.kind] = .some(cursor) } else {
                        spaces?[kindPage.space]?.cursors[kindPage.kind] = .some(cursor)
                    }
                }
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

    /// What a resync of one kind ended with: its cursor in the personal
    /// space and in each shared space, and how many rows it pulled.
    struct ResyncResult {
        var cursor: PullCursor?
        var spaceCursors: [SpaceID: PullCursor]
        var rows: Int
    }

    /// Re-pulls every row of `kind` from the start, in the personal space and
    /// in every shared space the device follows, and replaces the kind's
    /// snapshot in each with them, one journal write per space; queued edits
    /// stay on top.
    private func resync(_ kind: String, spaces: [SpaceID: SpaceCursors]?) async -> Result<ResyncResult, ResyncStop> {
        var pull = WholeKindPull(kind: kind, spaces: spaces?.mapValues(\.version))
        while true {
            if let stop = stopBeforeNextRequest() { return .failure(ResyncStop(outcome: stop)) }
            if pull.pages == options.maximumResyncPages {
                return .failure(ResyncStop(outcome: .failed(.pullNotFinished(.resyncPageLimit(kind: kind, pages: pull.pages)))))
            }
            let page: PullPage
            let expectation: ServerExpectation?
            do { expectation = try await outbox.knownServer().expectation } catch {
                return .failure(ResyncStop(outcome: .failed(.store(error))))
            }
            do {
                page = try await transport.pull(pull.request(limit: options.pullLimit, expectation: expectation))
            } catch {
                if let outcome = stopForNow(error) { return .failure(ResyncStop(outcome: outcome)) }
                if case .serverMismatch(let mismatch) = error { return .failure(ResyncStop(outcome: await stopForMismatch(mismatch))) }
                return .failure(ResyncStop(outcome: .failed(.pullNotFinished(.resyncRefused(kind: kind, error)))))
            }
            let grouped: [LocalStore.PulledKindPage]
            do { grouped = try Self.validate(page, cursors: pull.cursors, spaces: pull.named, limit: options.pullLimit) } catch {
                return .failure(ResyncStop(outcome: .failed(.malformedReply(.pullPage(reason: error.reason)))))
            }
            if let stop = await checkServer(of: page) { return .failure(ResyncStop(outcome: stop)) }
            do { try await absorbSpaces(of: page, into: &pull) } catch {
                return .failure(ResyncStop(outcome: .failed(.store(error))))
            }
            pull.absorbRows(grouped)
            if !page.hasMore { break }
        }
        for space in pull.spacesPulled {
            do {
                try await outbox.replaceSnapshot(kind: kind, rows: pull.rowsInPullOrder(in: space), cursor: pull.cursor(in: space),
                                                 space: space)
            } catch {
                return .failure(ResyncStop(outcome: .failed(.store(error))))
            }
        }
        return .success(ResyncResult(cursor: pull.cursor, spaceCursors: pull.spaceCursors, rows: pull.rows.count))
    }

    /// How a sync stops when a request fails for a reason that is no one
    /// operation's: offline, the server's trouble for now, or refused
    /// credentials; `nil` for the errors each step answers its own way.
    func stopForNow(_ error: TransportError) -> SyncOutcome? {
        switch error {
        case .offline: return .skipped(.offline)
        case .transient(let reason, let after): return .retryLater(reason: reason, retryAfter: after)
        case .serverUnreachable:
            statusState.serverUnreachableThisSync = true
            return .retryLater(reason: error.description, retryAfter: nil)
        case .unauthorized(let reason): return .failed(.authentication(reason: reason))
        default: return nil
        }
    }

    /// Keeps a page's space descriptions and losses, as every pull keeps
    /// them (first, so a space the server no longer lets the device read is
    /// gone before any row is kept), and folds them into a whole-kind pull.
    func absorbSpaces(of page: PullPage, into pull: inout WholeKindPull) async throws(StoreError) {
        guard pull.followsSpaces else { return }
        try await outbox.applySpaces(described: page.spaces, lost: page.lostSpaces)
        noteDescribed(page.spaces)
        noteLost(pull.absorbSpaces(of: page))
    }

    /// A pull reply that does not make sense, refused before anything is kept.
    struct MalformedPage: Error, Sendable, Hashable {
        /// What is wrong.
        var reason: String
    }

    /// Splits a page by space and kind and checks it: only requested kinds,
    /// rows of a shared space only when spaces were asked for (and never of
    /// a space the page says is lost), no more rows than asked, rows the
    /// store can keep (``LocalStore/problem(with:)``), in `(updatedAt, id)`
    /// order after the kind's cursor in its space, no id twice, and each
    /// kind's next cursor equal to its last row.
    static func validate(_ page: PullPage, cursors: [String: PullCursor?], spaces: [SpaceID: SpaceCursors]? = nil,
                         limit: Int) throws(MalformedPage) -> [LocalStore.PulledKindPage] {
        if page.rows.count > limit { throw MalformedPage(reason: "\(page.rows.count) rows for a limit of \(limit)") }
        let lost = Set(page.lostSpaces)
        var known = Set<SpaceID>(spaces.map { Array($0.keys) } ?? [])
        for space in page.spaces {
            if spaces == nil { throw MalformedPage(reason: "a description of space \(space.id) that was not asked for") }
            if space.id.isPersonal { throw MalformedPage(reason: "a description of the personal space") }
            if lost.contains(space.id) { throw MalformedPage(reason: "space \(space.id) both described and lost") }
            known.insert(space.id)
        }
        if spaces == nil, !lost.isEmpty || !page.nextSpaceCursors.isEmpty {
            throw MalformedPage(reason: "shared spaces in the reply to a pull that named none")
        }
        var bySpace: [SpaceID: [ServerRow]] = [:]
        for row in page.rows {
            guard cursors.keys.contains(row.kind) else { throw MalformedPage(reason: "row of kind \"\(row.kind)\" that was not asked for") }
            if !row.space.isPersonal && !known.contains(row.space) {
                throw MalformedPage(reason: "row \"\(row.id)\" of space \(row.space), which the user is not known to be a member of")
            }
            bySpace[row.space, default: []].append(row)
        }
        var result = try validateSpace(rows: bySpace[.personal] ?? [], next: page.nextCursors, cursors: cursors,
                                       hasMore: page.hasMore, space: .personal)
        var shared = Set(bySpace.keys).union(page.nextSpaceCursors.keys)
        shared.remove(.personal)
        for space in shared.sorted(by: <) {
            guard known.contains(space) else { throw MalformedPage(reason: "cursors of space \(space), which was not asked for") }
            let held = spaces?[space]?.cursors ?? [:]
            let spaceCursors = Dictionary(uniqueKeysWithValues: cursors.keys.map { ($0, held[$0] ?? nil) })
            result += try validateSpace(rows: bySpace[space] ?? [], next: page.nextSpaceCursors[space] ?? [:],
                                        cursors: spaceCursors, hasMore: page.hasMore, space: space)
        }
        return result
    }

    /// Checks one space's rows and next cursors of a page, split by kind.
    private static func validateSpace(rows: [ServerRow], next nextCursors: [String: PullCursor], cursors: [String: PullCursor?],
                                      hasMore: Bool, space: SpaceID) throws(MalformedPage) -> [LocalStore.PulledKindPage] {
        let named = space.isPersonal ? "" : " in space \(space)"
        var byKind: [String: [ServerRow]] = [:]
        var order: [String] = []
        for row in rows {
            // Checked here, not only by the store: a resync keeps its pages in memory until the last one.
            if let problem = LocalStore.problem(with: row) { throw MalformedPage(reason: "\(row.kind) row \"\(row.id)\"\(named): \(problem)") }
            if byKind[row.kind] == nil { order.append(row.kind) }
            byKind[row.kind, default: []].append(row)
        }
        var result: [LocalStore.PulledKindPage] = []
        for kind in nextCursors.keys.sorted() where byKind[kind] == nil {
            guard cursors.keys.contains(kind) else { throw MalformedPage(reason: "cursor for kind \"\(kind)\"\(named) that was not asked for") }
            // A last page may move a cursor past what the server no longer has (purged tombstones); never back.
            let next = nextCursors[kind]!
            let current: PullCursor? = cursors[kind] ?? nil
            if let current, next < current { throw MalformedPage(reason: "\(kind) cursor\(named) \(next) moves back from \(current)") }
            if !hasMore, current.map({ $0 < next }) ?? true {
                result.append(LocalStore.PulledKindPage(kind: kind, rows: [], cursor: next, space: space))
            }
        }
        for kind in order {
            let rows = byKind[kind]!
            var previous: PullCursor? = cursors[kind] ?? nil
            var ids = Set<String>()
            for row in rows {
                let position = PullCursor(updatedAt: row.updatedAt, id: row.id)
                if let previous, !(previous < position) {
                    throw MalformedPage(reason: "\(kind) rows\(named) out of order or not after the cursor at \(position)")
                }
                // A page is one read of the server: a row appears in it once
                // (a row changed during a resync appears again on a later page).
                if !ids.insert(row.id).inserted { throw MalformedPage(reason: "\(kind) row \"\(row.id)\"\(named) twice in one page") }
                previous = position
            }
            // The cursor is the last row's position; only a last page may go beyond it (see PullPage.nextCursors).
            guard let next = nextCursors[kind], let last = previous, next == last || (!hasMore && last < next) else {
                throw MalformedPage(reason: "\(kind) next cursor\(named) does not match its last row")
            }
            result.append(LocalStore.PulledKindPage(kind: kind, rows: rows, cursor: next, space: space))
        }
        return result
    }
}

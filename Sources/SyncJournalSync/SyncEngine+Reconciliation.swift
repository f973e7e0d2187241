import SyncJournalProtocol
import SyncJournalStore

extension SyncEngine {
    /// Brings the server the device now has every record the device holds,
    /// then syncs: the way out of ``SyncFailure/serverMismatch(_:)`` (a
    /// server reset, swapped for another database, or restored from a backup).
    ///
    /// It pulls every row of every kind from the start (a resync), in the
    /// personal space and in each shared space the device follows, then, in
    /// one journal record, queues a re-upload for each record the server
    /// lacks or holds at an older state than the device's acknowledged copy:
    /// a create with the same id, or an update carrying every field on the
    /// server's copy. Then it replaces the snapshot with the server's rows
    /// and fresh cursors, adopts the server's identity, and runs a sync that
    /// sends the re-uploads and every queued edit.
    ///
    /// What happens to each kind of record:
    /// - the server lacks it: re-created with the device's acknowledged copy;
    /// - the server has an older copy (the same server, restored, compared by
    ///   stamps) or, for another database, a copy with other fields (stamps
    ///   of two databases do not compare): the device's copy is sent as an
    ///   update on the server's;
    /// - the server has the same or a newer copy: the device takes the server's;
    /// - the server holds a tombstone: the deletion stands, as from any pull;
    /// - a record the server deleted after the backup was taken reappears on
    ///   the server: the device cannot tell that deletion from the loss, and
    ///   keeping a record is the side that loses nothing;
    /// - queued edits and conflicts are kept: a queued create is sent as
    ///   usual; queued updates and deletes go after the re-upload of the
    ///   copy they were made on and take its new stamp, or are rebased on a
    ///   server copy with the same fields; against a newer copy or a
    ///   tombstone they meet a conflict, resolved by the kind's policy;
    /// - rows the server has and the device does not are pulled as usual.
    ///
    /// Each step is journaled before the next, and until the last one the
    /// journaled mismatch keeps ordinary syncs stopped, so a crash or an
    /// error at any point leaves a state in which calling this again is
    /// safe: re-uploads already queued are not queued twice. It also runs
    /// when no mismatch was found (it then checks that the server has
    /// everything). One sync or reconciliation runs at a time.
    ///
    /// ```swift
    /// if case .failed(.serverMismatch(let mismatch)) = await engine.sync() {
    ///     print("the server changed: \(mismatch)")
    ///     switch await engine.reconcileWithServer() {
    ///     case .ok(let pushed, _, _): print("re-uploaded \(pushed) records and edits")
    ///     case let other: print("try again later: \(other)")
    ///     }
    /// }
    /// ```
    public func reconcileWithServer() async -> SyncOutcome {
        while let running { _ = await running.value }
        if started {
            handle(.syncStarted)
        }
        let task = Task {
            let outcome = await self.runReconciliation()
            await self.finishRun(outcome)
            return outcome
        }
        running = task
        return await task.value
    }

    /// Everything the server holds of the engine's kinds, pulled from the
    /// start, and the identity its replies carried.
    private struct ServerContents {
        var identity: ServerIdentity?
        /// Per kind, its rows in the personal space and in every shared
        /// space the device follows (a row's key names its space).
        var rows: [String: [ServerRow]] = [:]
        var cursors: [String: PullCursor?] = [:]
        /// Per shared space, each kind's cursor after the re-pull.
        var spaceCursors: [SpaceID: [String: PullCursor]] = [:]
        /// The shared spaces pulled (the ones the device followed, less
        /// those the server no longer lets it read), each replaced whole.
        var spaces: Set<SpaceID> = []

        /// Drops what was gathered of a space the server no longer lets
        /// the device read, in every kind.
        mutating func forget(_ space: SpaceID) {
            spaces.remove(space)
            spaceCursors[space] = nil
            for kind in rows.keys { rows[kind]?.removeAll { $0.space == space } }
        }
    }

    private func runReconciliation() async -> SyncOutcome {
        statusState.serverUnreachableThisSync = false
        let known: KnownServer
        do { known = try await store.knownServer() } catch { return .failed(.store(error)) }
        setActivity(.pulling)
        let contents: ServerContents
        switch await pullEverything(known: known) {
        case .success(let value): contents = value
        case .failure(let stop): return stop.outcome
        }
        var serverRows: [RecordKey: ServerRow] = [:]
        var seen: Int64?
        func saw(_ stamp: Int64) { if seen.map({ $0 < stamp }) ?? true { seen = stamp } }
        for rows in contents.rows.values {
            for row in rows {
                serverRows[row.key] = row
                saw(row.updatedAt)
            }
        }
        for case let cursor? in contents.cursors.values { saw(cursor.updatedAt) }
        let sameHistory = contents.identity != nil && contents.identity == known.identity
        do {
            lastReconciliation = try await store.queueReuploads(serverRows: serverRows, kinds: Set(options.kinds), sameHistory: sameHistory)
            for kind in contents.rows.keys.sorted() {
                let bySpace = Dictionary(grouping: contents.rows[kind]!, by: \.space)
                try await store.replaceSnapshot(kind: kind, rows: bySpace[.personal] ?? [], cursor: contents.cursors[kind] ?? nil)
                for space in contents.spaces.sorted(by: <) {
                    try await store.replaceSnapshot(kind: kind, rows: bySpace[space] ?? [], cursor: contents.spaceCursors[space]?[kind],
                                                    space: space)
                }
            }
            try await store.recordServer(.adopted(contents.identity, seenStamp: seen))
        } catch {
            return .failed(.store(error))
        }
        statusState.serverMismatch = nil
        return await run()
    }

    private struct ReconciliationStop: Error {
        var outcome: SyncOutcome
    }

    /// Pulls every row of every kind from the start. The first reply names
    /// the server (no expectation is sent: this is the server the device
    /// means to adopt); later ones must carry the same identity.
    private func pullEverything(known: KnownServer) async -> Result<ServerContents, ReconciliationStop> {
        var contents = ServerContents()
        var first = true
        // The shared spaces the device follows are pulled whole too: the
        // server may have lost their rows (and their deletions) as well.
        var followed: Set<SpaceID>?
        if options.followsSharedSpaces {
            do { followed = Set(try await outbox.spaceCursors(for: options.kinds).keys) } catch {
                return .failure(ReconciliationStop(outcome: .failed(.store(error))))
            }
        }
        for kind in options.kinds.sorted() {
            var pull = WholeKindPull(kind: kind, spaces: followed.map { Dictionary(uniqueKeysWithValues: $0.map { ($0, nil) }) })
            while true {
                if pull.pages == options.maximumResyncPages {
                    return .failure(ReconciliationStop(outcome: .failed(.pullNotFinished(.resyncPageLimit(kind: kind, pages: pull.pages)))))
                }
                let expectation = first ? nil : contents.identity.map { ServerExpectation(identity: $0, seenStamp: nil) }
                let page: PullPage
                do {
                    page = try await transport.pull(pull.request(limit: options.pullLimit, expectation: expectation))
                } catch {
                    if let outcome = stopForNow(error) { return .failure(ReconciliationStop(outcome: outcome)) }
                    // The server changed again while it was read: nothing is journaled yet; try again.
                    if case .serverMismatch(let mismatch) = error {
                        return .failure(ReconciliationStop(outcome: .failed(.serverMismatch(known.mismatch ?? mismatch))))
                    }
                    return .failure(ReconciliationStop(outcome: .failed(.pullNotFinished(.resyncRefused(kind: kind, error)))))
                }
                if first {
                    contents.identity = page.server
                    first = false
                } else if page.server != contents.identity, let expected = contents.identity, let found = page.server {
                    return .failure(ReconciliationStop(outcome: .failed(.serverMismatch(.differentServer(expected: expected, found: found)))))
                }
                let grouped: [LocalStore.PulledKindPage]
                do { grouped = try Self.validate(page, cursors: pull.cursors, spaces: pull.named, limit: options.pullLimit) } catch {
                    return .failure(ReconciliationStop(outcome: .failed(.malformedReply(.pullPage(reason: error.reason)))))
                }
                do { try await absorbSpaces(of: page, into: &pull) } catch {
                    return .failure(ReconciliationStop(outcome: .failed(.store(error))))
                }
                // A space lost while a later kind is pulled is gone for the
                // kinds already pulled too.
                if pull.followsSpaces { page.lostSpaces.forEach { contents.forget($0) } }
                pull.absorbRows(grouped)
                if !page.hasMore { break }
            }
            contents.rows[kind] = pull.rowsInPullOrder()
            contents.cursors[kind] = .some(pull.cursor)
            for (space, cursor) in pull.spaceCursors { contents.spaceCursors[space, default: [:]][kind] = cursor }
            contents.spaces.formUnion(pull.spacesPulled.filter { !$0.isPersonal })
        }
        return .success(contents)
    }
}

import SyncJournalProtocol
import SyncJournalCore

// Suspension lets an app hold no file lock while iOS suspends it (a process
// suspended with a lock on a file in a shared container is killed), and
// lets an extension write the journal meanwhile. Writes fail fast while
// suspended instead of waiting: an app that is being suspended has seconds,
// and a call that waits would hold its task across the suspension.
extension LocalStore {
    /// Lets the store go quiet before the app is suspended: the changes
    /// already queued are journaled durably (their callers get their results),
    /// then the journal is closed and its lock released, so another process
    /// (an app extension, or the system's check for held locks) finds it free.
    ///
    /// While suspended, reads, queries and observation answer from memory;
    /// every write (edits, checkpoints, the sync engine's hand-overs) fails
    /// at once with ``StoreError/suspended(path:)``. Operations that were in
    /// flight are handed back: a reply that arrives for them later is not
    /// kept, and they go again after ``resume()`` with their own ids, which
    /// the server recognises. Suspend the sync engine first
    /// (``SyncEngine/suspend()``), so it starts nothing new.
    ///
    /// Suspending a store that is not open (closed, retired, unreadable) or
    /// already suspended does nothing.
    ///
    /// ```swift
    /// // when the scene enters the background, inside a background task:
    /// await engine.suspend()
    /// await store.suspend()
    /// ```
    public func suspend() async {
        await takeSuspensionTurn()
        defer { endSuspensionTurn() }
        switch currentStatus {
        case .ready, .failed: break
        case .suspended, .unreadable, .retired, .closed: return
        }
        suspension.suspending = true
        defer { suspension.suspending = false }
        if case .ready = currentStatus, batcher.isBusy { await finishQueuedWrites() }
        await waitForSyncs()
        switch currentStatus {
        case .ready, .failed: break
        case .suspended, .unreadable, .retired, .closed: return
        }
        suspension.abandoned.formUnion(inFlight)
        inFlight.removeAll()
        if let writer {
            self.writer = nil
            // Everything acknowledged was synced already; the close only
            // marks the end and releases the lock, which it always does.
            try? await writer.close()
        }
        states.dropInFlight()
        currentStatus = .suspended
    }

    /// Reopens a suspended store: takes the journal's lock again and reads
    /// what another process (an app extension) appended meanwhile, so the
    /// state includes it; observed queries and ``changes()`` streams hear of
    /// every record that changed. A read-only store reads its journal again.
    ///
    /// If the journal cannot be opened now (another process holds it, the
    /// device is locked and the file is protected, or it is gone), the store
    /// stays suspended and the call throws; call it again later. A journal found
    /// unreadable leaves the store ``StoreStatus/unreadable(_:)``.
    /// Resuming a store that is not suspended does nothing.
    ///
    /// ```swift
    /// // when the scene becomes active again:
    /// try await store.resume()
    /// await engine.resume()
    /// ```
    public func resume() async throws(StoreError) {
        await takeSuspensionTurn()
        defer { endSuspensionTurn() }
        guard case .suspended = currentStatus else { return }
        if options.readOnly {
            let read = await Self.readJournal(path: path, system: options.system)
            // Closed or retired meanwhile: it stays so.
            guard case .suspended = currentStatus else { return }
            switch read {
            case .read(let result):
                unreadTailFound = UnreadTail(result.report)
                currentStatus = .ready
                adopt(result.state, records: result.records)
            case .unreadable(let reason):
                becomeUnreadable(reason)
            case .cannotOpen(let error):
                throw .cannotOpen(path: path, cause: error)
            }
            return
        }
        // A journal that vanished meanwhile is not replaced by an empty one:
        // this store's state came from it, and its queued edits with it.
        let opening = await Self.openJournal(path: path, options: options, creating: false)
        guard case .suspended = currentStatus else {
            if case .opened(let writer, _, _) = opening { try? await writer.close() }
            return
        }
        switch opening {
        case .opened(let writer, let reopened, let records):
            self.writer = writer
            writerFailure = nil
            // A new descriptor: a barrier that failed on the old one says
            // nothing about it, and nothing written there waits any more.
            batcher.commits = CommitQueue()
            currentStatus = .ready
            adopt(reopened, records: records)
        case .unreadable(let reason):
            becomeUnreadable(reason)
        case .cannotOpen(let error):
            throw .cannotOpen(path: path, cause: error)
        }
    }

    /// Queues a change that writes nothing behind every queued one and
    /// waits for it: it returns once they are all durable (or refused).
    private func finishQueuedWrites() async {
        let _: Result<Void, StoreError> = await withCheckedContinuation { continuation in
            batcher.enqueue(WriteBatcher.Request(compute: { _ throws(StoreError) in [] }, checkpoint: false, continuation: continuation))
            startFlushIfIdle()
        }
    }

    /// Takes the state read back on resume in place of the one kept over
    /// the suspension, and tells indexes, observers and waiters what differs.
    private func adopt(_ reopened: StoreState, records: Int) {
        let before = state
        states.reset(to: reopened)
        journalRecords = records
        guard before != reopened else { return }
        if !options.indexes.isEmpty { fieldIndexes = FieldIndexes(options.indexes, state: reopened) }
        var keys = Set(before.snapshot.keys)
        keys.formUnion(reopened.snapshot.keys)
        keys.formUnion(before.outbox.keys)
        keys.formUnion(reopened.outbox.keys)
        var changes: [StoreChange] = []
        var pulledKinds = Set<String>()
        var touchedKinds = Set<String>()
        for key in keys.sorted(by: { ($0.kind, $0.id) < ($1.kind, $1.id) })
        where before.visibleFields(of: key) != reopened.visibleFields(of: key) {
            touchedKinds.insert(key.kind)
            // A queue that changed for the record is a local edit (in the other
            // process); anything else is what the other process pulled.
            let queued = reopened.outbox.operations(on: key)
            if !queued.isEmpty && queued != before.outbox.operations(on: key) {
                changes.append(.edited(key))
            } else {
                pulledKinds.insert(key.kind)
            }
        }
        // Operations another process settled while this one slept.
        for entry in before.outbox.operations where !reopened.outbox.contains(entry.id) {
            if let conflict = reopened.conflicts.last(where: { $0.id == entry.id }) {
                board.settle(entry.id, .final(.conflicted(conflict)))
                changes.append(.conflict(conflict))
            } else if let row = reopened.snapshot[entry.operation.key] {
                board.settle(entry.id, .final(.acknowledged(row)))
                changes.append(.acknowledged(entry.id, row))
            } else {
                board.settle(entry.id, .final(.unknown))
            }
        }
        if !pulledKinds.isEmpty { changes.append(.pulled(kinds: pulledKinds.sorted())) }
        board.broadcast(changes)
        if !observedQueries.isEmpty && !touchedKinds.isEmpty { wakeObservations(of: touchedKinds) }
    }

    /// The journal read back on resume cannot be used: the store says so
    /// and keeps nothing it can no longer back with the file.
    private func becomeUnreadable(_ reason: UnreadableReason) {
        currentStatus = .unreadable(reason)
        states.reset(to: StoreState())
        endObservation()
    }

    /// Waits until no other suspend or resume runs, then claims the turn.
    private func takeSuspensionTurn() async {
        while suspension.changing {
            await withCheckedContinuation { suspension.waiters.append($0) }
        }
        suspension.changing = true
    }

    /// Gives the turn to the next suspend or resume waiting.
    private func endSuspensionTurn() {
        suspension.changing = false
        let waiting = suspension.waiters
        suspension.waiters = []
        for waiter in waiting { waiter.resume() }
    }
}

import SyncJournalProtocol
import SyncJournalCore

extension LocalStore {
    /// Waits until operation `id` has an outcome: acknowledged, conflicted
    /// (with the policy's resolution), quarantined, or cancelled locally. An
    /// operation merged into an earlier one by compaction reports that one's outcome.
    ///
    /// Only a running ``SyncEngine`` (or another caller of the store's
    /// engine side) ever gives a queued operation an outcome: with none,
    /// the wait ends only when the timeout passes, the task is cancelled or
    /// the store closes. Both of the first two return
    /// ``OperationOutcome/pending``: the operation is still queued.
    ///
    /// ```swift
    /// let store = try await LocalStore.open(path: "journals/pins.journal")
    /// let edit = try await store.create("pin", fields: ["visited": .bool(true)])
    /// switch await store.outcome(of: edit.operation, timeout: .seconds(30)) {
    /// case .acknowledged(let row): print("saved at", row.updatedAt)
    /// case .conflicted(let conflict): print("lost fields", conflict.resolution.lostFields)
    /// case .merged: print("merged with the server's changes")
    /// case .quarantined(let entry): print("needs attention:", entry.lastError ?? "")
    /// case .pending: print("not synced yet")
    /// case .rejected(let rejection): print("not saved:", rejection.reason)
    /// case .cancelled, .unknown: break
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - id: The operation, usually an ``Edit/operation``.
    ///   - timeout: How long to wait at most; `nil` waits until there is an outcome.
    ///   - clock: The clock the timeout is measured on (tests pass one they move by hand).
    public func outcome(of id: OperationID, timeout: Duration? = nil,
                        clock: any Clock<Duration> = ContinuousClock()) async -> OperationOutcome {
        let token = board.makeWaitToken()
        let timer = timeout.map { timeout in
            Task { [weak self] in
                do { try await clock.sleep(for: timeout) } catch { return }
                await self?.giveUpWait(token)
            }
        }
        defer {
            timer?.cancel()
            _ = board.hasGivenUp(token, forget: true)
        }
        return await withTaskCancellationHandler {
            await waitForOutcome(of: id, token: token)
        } onCancel: {
            Task { await self.giveUpWait(token) }
        }
    }

    /// Ends the wait `token` with ``OperationOutcome/pending``.
    private func giveUpWait(_ token: Int) { board.giveUp(token) }

    /// The wait of ``outcome(of:timeout:clock:)``, following compaction, until
    /// an outcome or until the wait `token` gives up.
    private func waitForOutcome(of id: OperationID, token: Int) async -> OperationOutcome {
        var id = id
        while true {
            var settled = board.recentOutcome(of: id)
            if settled == nil {
                guard let entry = state.outbox[id], isOpen else { return .unknown }
                if entry.quarantined { return .quarantined(OutboxEntryStatus(entry, inFlight: false)) }
                if Task.isCancelled || board.hasGivenUp(token) { return .pending }
                settled = await withCheckedContinuation { board.wait(for: id, token: token, $0) }
            }
            switch settled! {
            case .final(let outcome): return outcome
            case .coalesced(let into): id = into
            }
        }
    }

    /// A stream of what changes in the store: edits, acknowledgements,
    /// conflicts, quarantines and pulls. It ends when the store closes or retires.
    ///
    /// ```swift
    /// for await change in await store.changes() {
    ///     if case .conflict(let conflict) = change { showBanner(for: conflict) }
    /// }
    /// ```
    public func changes() -> AsyncStream<StoreChange> {
        let (stream, continuation) = AsyncStream<StoreChange>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        guard isOpen else {
            continuation.finish()
            return stream
        }
        let token = board.addObserver(continuation)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeObserver(token) }
        }
        return stream
    }

    private func removeObserver(_ token: Int) { board.removeObserver(token) }

    /// Tells waiters and observers what the events just applied mean.
    func publish(_ events: [StoreEvent]) {
        var changes: [StoreChange] = []
        for event in events.flatMap(\.parts) {
            switch event {
            case .edit(let operation, let steps):
                changes.append(.edited(operation.key))
                guard !steps.isEmpty else { continue }
                var survivors: [OperationID] = steps.compactMap { if case .replace(let id, _) = $0 { return id } else { return nil } }
                survivors.append(operation.id)
                let survivor = survivors.last { state.outbox[$0] != nil }
                for case .remove(let id) in steps {
                    board.settle(id, survivor.map { .coalesced(into: $0) } ?? .final(.cancelled))
                }
            case .editBatch(let operations):
                for key in Set(operations.map(\.key)) { changes.append(.edited(key)) }
            case .acknowledged(let acks):
                // A push acknowledges hundreds at once; list them only for a listener.
                let listed = board.hasObservers
                for ack in acks {
                    board.settle(ack.operationID, .final(.acknowledged(ack.row)))
                    if listed { changes.append(.acknowledged(ack.operationID, ack.row)) }
                }
            case .conflicted(let id, _), .conflictResolved(let id, _, _, _):
                if let conflict = state.conflicts.last(where: { $0.id == id }) {
                    board.settle(id, .final(conflict.isMerge ? .merged(conflict) : .conflicted(conflict)))
                    changes.append(conflict.isMerge ? .merged(conflict) : .conflict(conflict))
                }
            case .attemptFailed(let id, _, _, let quarantine):
                if quarantine, let entry = state.outbox[id] {
                    board.settle(id, .final(.quarantined(OutboxEntryStatus(entry, inFlight: false))), remember: false)
                    changes.append(.quarantined(OutboxEntryStatus(entry, inFlight: false)))
                }
            case .failed(let id, _, let permanent):
                // A permanent failure moved the operation to the rejections,
                // at their end: the search from the end is short.
                if permanent, let rejection = state.rejections.last(where: { $0.operation.id == id }) {
                    board.settle(id, .final(.rejected(rejection)))
                    changes.append(.rejected(rejection))
                }
            case .discarded(let id):
                board.settle(id, .final(.cancelled))
            case .pulled(let kind, let rows, _, _):
                if !rows.isEmpty { changes.append(.pulled(kinds: [kind])) }
            case .forgotten(let kind, _, _):
                changes.append(.pulled(kinds: [kind]))
            case .spaceLost(let space):
                // Its queued operations were just moved to the rejections, in queue order.
                for rejection in state.rejections where rejection.operation.key.space == space {
                    board.settle(rejection.operation.id, .final(.rejected(rejection)))
                }
                changes.append(.spaceLost(space))
            case .spaceDescribed(let space):
                changes.append(.spaceDescribed(space))
            case .reuploads(let plan):
                for upload in plan.uploads { changes.append(.edited(upload.key)) }
                // Whoever waits for a renamed operation waits for its new id.
                for rename in plan.renames { board.settle(rename.from, .coalesced(into: rename.to)) }
            case .sent, .withdrawn, .released, .conflictDismissed, .conflictSettled, .transaction, .checkpoint, .server:
                break
            }
        }
        board.broadcast(changes)
    }

    /// Ends every wait and observation (the store closed or retired).
    func endObservation() {
        board.endAll()
        observedQueries.removeAll()
    }
}

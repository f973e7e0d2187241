import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore

// Pushing: a batch handed to the transport, its replies kept, failures
// backed off one operation at a time.
extension SyncEngine {
    /// Pushes `batch` (already marked sent and in flight, its contents on
    /// the server) and keeps the replies. A batch the server finds too large
    /// is split in halves, each pushed in turn; a single operation too large
    /// fails permanently.
    func pushMutations(_ batch: [OutboxOperation], newlyMarked: [OperationID], pushed: inout Int, conflicts: inout Int,
                      attempted: inout Set<OperationID>) async -> PushStep {
        let ids = batch.map(\.id)
        let mutations = batch.map { Mutation($0.operation) }
        let expectation: ServerExpectation?
        do throws(StoreError) {
            expectation = try await outbox.knownServer().expectation
        } catch {
            // Nothing was sent: the marks are the store's to keep or lose,
            // and the sync stops with the store's reason.
            await outbox.finishSending(ids)
            return .stop(.failed(.store(error)))
        }
        let results: [MutationResult]
        do {
            // Without an identity there is nothing to expect: the plain push,
            // which every transport implements itself.
            if let expectation {
                results = try await transport.push(mutations, expecting: expectation)
            } else {
                results = try await transport.push(mutations)
            }
        } catch {
            switch error {
            case .offline:
                // Nothing left the device: undo this attempt's sent marks, so
                // a skipped sync leaves the state as it was (and a create
                // deleted later can still vanish without reaching the server).
                do { try await outbox.withdrawSending(ids, newlyMarked: Set(newlyMarked)) } catch { return .stop(.failed(.store(error))) }
                return .stop(.skipped(.offline))
            case .transient(let reason, let after):
                // The server's trouble, not the operations': attempts are
                // counted, the permanent budget is not, and the whole sync backs off.
                // A store that cannot keep the attempt is the graver trouble: the sync stops with it.
                do { _ = try await outbox.endSending(ids, outcomes: ids.map { ($0, .failure(.transient, reason: reason)) }) }
                catch { return .stop(.failed(.store(error))) }
                return .stop(.retryLater(reason: reason, retryAfter: after))
            case .serverUnreachable(let reason):
                // As a transient failure: a timed-out request may have been applied.
                statusState.serverUnreachableThisSync = true
                do { _ = try await outbox.endSending(ids, outcomes: ids.map { ($0, .failure(.transient, reason: reason)) }) }
                catch { return .stop(.failed(.store(error))) }
                return .stop(.retryLater(reason: error.description, retryAfter: nil))
            case .unauthorized(let reason):
                // The credentials, not the operations: none is charged, and
                // they go again once the app has signed in.
                await outbox.finishSending(ids)
                return .stop(.failed(.authentication(reason: reason)))
            case .tooLarge(let reason):
                await outbox.finishSending(ids)
                if batch.count == 1 {
                    return await fail(batch[0], kind: .permanent, reason: "too large for the server: \(reason)", attempted: &attempted)
                }
                let half = batch.count / 2
                for part in [Array(batch[..<half]), Array(batch[half...])] {
                    let partIDs = part.map(\.id)
                    // Still queued and not cancelled: hand it over again.
                    let again: [OutboxOperation]
                    do { again = try await outbox.beginSending(partIDs) } catch { return .stop(.failed(.store(error))) }
                    if again.isEmpty { continue }
                    let step = await push(again, newlyMarked: newlyMarked, pushed: &pushed, conflicts: &conflicts, attempted: &attempted)
                    if case .stop = step { return step }
                }
                return .done
            case .serverMismatch(let mismatch):
                // Nothing was applied: no operation is charged, and none leaves the queue.
                await outbox.finishSending(ids)
                return .stop(await stopForMismatch(mismatch))
            case .permanent, .cursorExpired, .spaceRefused, .attachmentRefused:
                // The request as a whole is refused (say, a revoked token): no
                // single operation is to blame, so none is charged for it.
                await outbox.finishSending(ids)
                return .stop(.failed(.transport(error)))
            }
        }
        // A reply is checked whole before any of it is kept. Servers answer in
        // request order, so the reply is matched by position; only a reply in
        // another order is matched by id.
        let inOrder = results.count == batch.count && zip(results, ids).allSatisfy { $0.operationID == $1 }
        var byID: [OperationID: OutboxOperation] = [:]
        if !inOrder {
            guard results.count == ids.count, Set(results.map(\.operationID)) == Set(ids) else {
                await outbox.finishSending(ids)
                if case .retired = await outbox.status { return .stop(.failed(.store(.retired))) }
                return .stop(.failed(.malformedReply(.pushResultsMismatch(results: results.count, mutations: ids.count))))
            }
            byID = Dictionary(uniqueKeysWithValues: batch.map { ($0.id, $0) })
        }
        var outcomes: [(OperationID, LocalStore.DeliveryOutcome)] = []
        outcomes.reserveCapacity(results.count)
        var entries: [OutboxOperation] = []
        entries.reserveCapacity(results.count)
        for (index, result) in results.enumerated() {
            let entry = inOrder ? batch[index] : byID[result.operationID]!
            entries.append(entry)
            switch result.outcome {
            case .applied(let row): outcomes.append((entry.id, .acknowledged(row)))
            case .conflict(let server): outcomes.append((entry.id, .conflicted(server: server)))
            case .rejected(let reason, let permanent):
                if permanent, Self.isSpaceRefusal(reason, of: entry.operation) {
                    // The user's role in the space refuses it, not the record:
                    // every resend is refused the same, so it is given up at once.
                    outcomes.append((entry.id, .refused(reason: reason)))
                } else if !permanent, let content = MissingContentRefusal.content(in: reason) {
                    if await holdsFile(of: content) {
                        // Collected on the server, or a server restored from a backup: upload it again first.
                        contentsToReupload.insert(content)
                        outcomes.append((entry.id, .failure(.transient, reason: reason)))
                    } else {
                        // Not here either (a record shown from the server, restored as the
                        // device showed it): nothing can upload it, so resending never helps.
                        outcomes.append((entry.id, .refused(reason: Self.unobtainable(content))))
                    }
                } else {
                    outcomes.append((entry.id, .failure(permanent ? .permanent : .transient, reason: reason)))
                }
            case .duplicate, .noMatch: outcomes.append((entry.id, await readBack(entry, outcome: result.outcome)))
            }
        }
        let kept: SendingEnd
        do { kept = try await outbox.endSending(ids, outcomes: outcomes) } catch {
            if case .retired = error { return .stop(.failed(.store(.retired))) }
            return .stop(.failed(.malformedReply(.pushRows(error))))
        }
        conflicts += kept.conflicts
        let now = clock.now()
        var failed: [OutboxOperation] = []
        // Most replies are all acknowledgements of operations that never failed:
        // no per-operation bookkeeping then.
        let forgetFailures = !failuresInARow.isEmpty
        for (index, (id, outcome)) in outcomes.enumerated() {
            switch outcome {
            case .acknowledged:
                pushed += 1
                if forgetFailures { failuresInARow[id] = nil }
            case .conflicted:
                attempted.insert(id)
                if forgetFailures { failuresInARow[id] = nil }
            case .refused:
                // Out of the queue for good: nothing of it is retried.
                attempted.insert(id)
                failuresInARow[id] = nil
                retryAt[id] = nil
            case .failure:
                attempted.insert(id)
                failed.append(entries[index])
            }
        }
        backOff(failed, quarantined: kept.quarantined, at: now)
        return .done
    }

    /// Records a failure of one operation the engine found itself (not in a reply).
    private func fail(_ entry: OutboxOperation, kind: FailureKind, reason: String, attempted: inout Set<OperationID>) async -> PushStep {
        attempted.insert(entry.id)
        let kept: SendingEnd
        do { kept = try await outbox.endSending([], outcomes: [(entry.id, .failure(kind, reason: reason))]) }
        catch { return .stop(.failed(.store(error))) }
        backOff([entry], quarantined: kept.quarantined, at: clock.now())
        return .done
    }

    /// Operations that failed wait out their own backoff before they are
    /// tried again; a quarantined one waits for the app instead, so when the
    /// app releases it, it goes with the next attempt.
    func backOff(_ entries: [OutboxOperation], quarantined: Set<OperationID>, at now: Int64) {
        for entry in entries {
            if quarantined.contains(entry.id) {
                retryAt[entry.id] = nil
                failuresInARow[entry.id] = nil
                continue
            }
            let failures = (failuresInARow[entry.id] ?? 0) + 1
            failuresInARow[entry.id] = failures
            let delay = backoffDelay(afterFailures: failures)
            retryAt[entry.id] = now + max(delay, 1)
        }
    }

    /// Whether `reason`, a permanent rejection of `operation`, is the server
    /// refusing the user's role in the operation's shared space: not a member
    /// (`no access to space ID`, the same words whether or not the space
    /// exists) or a viewer (`read only: a viewer of space ID`), in the words
    /// of journals/PROTOCOL.md ("Membership"). A personal operation never is.
    static func isSpaceRefusal(_ reason: String, of operation: JournalOperation) -> Bool {
        SpaceWriteRefusal(reason: reason, space: operation.space) != nil
    }

    /// Explains a reply from a server without exactly-once delivery by reading
    /// the row back. A duplicate create is confirmed only by a
    /// readable row (with other fields, it is a conflict); an unreadable
    /// collision stays retryable. An update or delete that matched nothing is
    /// a conflict when a newer row is readable, and "deleted or no access"
    /// when none is (a delete then has what it wanted).
    private func readBack(_ entry: OutboxOperation, outcome: MutationOutcome) async -> LocalStore.DeliveryOutcome {
        let operation = entry.operation
        let row: ServerRow?
        // Read in the operation's own space: a shared record is not the personal one of the same kind and id.
        do { row = try await transport.read(operation.key) } catch {
            // A read that failed for now is retried; a transport that cannot read
            // rows at all (or a refused read) counts toward quarantine, never loops for ever.
            if case .permanent = error { return .failure(.permanent, reason: "could not read the row back: \(error)") }
            return .failure(.transient, reason: "could not read the row back: \(error)")
        }
        let live = row.flatMap { $0.isTombstone ? nil : $0 }
        if operation.kind == .create {
            guard let live else { return .failure(.transient, reason: "id collision with a row this user cannot read") }
            return live.fields == operation.fields ? .acknowledged(live) : .conflicted(server: live)
        }
        guard let live else {
            if operation.kind == .delete {
                // Gone (or hidden) either way: the delete has what it wanted.
                let stamp = operation.baseUpdatedAt ?? 0
                return .acknowledged(ServerRow(kind: operation.entity, id: operation.recordID, updatedAt: stamp, deletedAt: stamp,
                                               modelVersion: operation.modelVersion))
            }
            return .failure(.deletedOrNoAccess, reason: "deleted or no access: no readable row \(operation.key)")
        }
        if live.updatedAt != operation.baseUpdatedAt { return .conflicted(server: live) }
        return .failure(.transient, reason: "the server matched no row although \(operation.key) is unchanged")
    }
}

import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// Performing steps: edits, syncs with their faults, other writers, crashes.
extension SimulationRun {
    func perform(_ action: SimulationAction) async {
        if await performAttachmentStep(action) { return }
        switch action {
        case .edit(let device, let edit):
            _ = await makeEdit(device: device, edit)
        case .sync(let device, let fault):
            await sync(device: device, fault: fault)
        case .online(let device, let online):
            await devices[device].setOnline(online)
        case .writerWrite(let kind, let id, let fields):
            do throws(TransportError) {
                if try await server.write(kind: kind, id: id, fields: fields) {
                    await log.noteWriter(RecordKey(kind: kind, id: id), created: true, sequence: counter.next())
                }
            } catch {
                fail(.server, "the other writer's write of \(kind) \(id) failed: \(error)")
            }
        case .writerUpdate(let kind, let id, let fields):
            do throws(TransportError) { try await server.update(kind: kind, id: id, changes: fields) } catch {
                fail(.server, "the other writer's update of \(kind) \(id) failed: \(error)")
            }
        case .writerDelete(let kind, let id):
            do throws(TransportError) {
                if try await server.delete(kind: kind, id: id) {
                    await log.noteWriter(RecordKey(kind: kind, id: id), created: false, sequence: counter.next())
                }
            } catch {
                fail(.server, "the other writer's delete of \(kind) \(id) failed: \(error)")
            }
        case .recordFault(let kind, let id, let permanent, let times):
            await server.setRecordFault(kind: kind, id: id, permanent: permanent, times: times)
        case .clearRecordFault(let kind, let id):
            await server.clearRecordFaults(kind: kind, id: id)
        case .crash(let device, let powerSeed):
            let before = await state(of: device)
            await devices[device].crash(powerSeed.map { .random(seed: $0) } ?? .processCrash)
            await restartAndCompare(device: device, expected: before, what: powerSeed == nil ? "a process crash at rest" : "a power cut at rest")
        case .crashMidRequest(let device, let choice, let powerSeed):
            await crashMidRequest(device: device, choice: choice, powerSeed: powerSeed)
        case .inFlightEdit(let device, let choice, let loseReply):
            await inFlightEdit(device: device, choice: choice, loseReply: loseReply)
        case .checkpoint(let device):
            do { try await devices[device].store?.checkpoint() } catch {
                fail(.replayEqualsState, "\(name(device))'s checkpoint failed on a healthy disk: \(error)")
            }
        case .serverBackup:
            await server.backUp()
        case .serverRestore:
            let held = configuration.faults.contains(.attachments) ? await server.storedContents() : []
            guard await server.restoreBackup() else { break }
            if !held.isEmpty { contentsLostInRestores.formUnion(held.subtracting(await server.storedContents())) }
            statistics.serverRestores += 1
            await log.forgetApplied()
            for kind in Simulation.kinds {
                for id in Simulation.pool[kind]! where ((try? await server.row(kind: kind, id: id)) ?? nil) != nil {
                    await log.noteRestored(RecordKey(kind: kind, id: id), sequence: counter.next())
                }
            }
            // The shared list's rows too: a restore revives them the same way.
            if configuration.users > 1 {
                for id in Simulation.pool["pin"]! {
                    let key = RecordKey(kind: "pin", id: id, space: Simulation.sharedList)
                    if ((try? await server.row(key)) ?? nil) != nil { await log.noteRestored(key, sequence: counter.next()) }
                }
            }
        case .membership(let change):
            // On a replayed (shrunk) trace a change may no longer apply (a
            // removal of someone already gone): the server refuses it, and the step does nothing.
            do throws(TransportError) {
                switch change {
                case .set(let user, let role): try await server.change(.setMember(Simulation.sharedList, user: user, role: role), user: "u1")
                case .remove(let user): try await server.change(.removeMember(Simulation.sharedList, user: user), user: "u1")
                case .leave(let user): try await server.change(.leave(Simulation.sharedList), user: user)
                }
                statistics.membershipChanges += 1
            } catch {}
        case .openAttachment, .uploadFault, .crashMidUpload, .collectAttachments, .serverCollectAttachments:
            break
        case .crashMidCheckpoint(let device, let calls, let powerSeed):
            let before = await state(of: device)
            devices[device].disk.freeze(afterCalls: calls)
            try? await devices[device].store?.checkpoint()
            await devices[device].crash(.random(seed: powerSeed))
            statistics.crashesMidCheckpoint += 1
            await restartAndCompare(device: device, expected: before, what: "a power cut inside a checkpoint")
        case .crashMidWrite(let device, let calls, let edit, let powerSeed):
            let before = await state(of: device)
            devices[device].disk.freeze(afterCalls: calls)
            let acknowledged = await makeEdit(device: device, edit)
            let after = acknowledged ? await state(of: device) : nil
            await devices[device].crash(.random(seed: powerSeed))
            statistics.crashesMidWrite += 1
            if let after {
                await restartAndCompare(device: device, expected: after, what: "a power cut after an acknowledged edit")
            } else {
                statistics.crashes += 1
                do { try await devices[device].restart() } catch {
                    fail(.replayEqualsState, "\(name(device)) could not reopen its journal after a power cut inside an edit: \(error)")
                    return
                }
                guard let reopened = await state(of: device), let before else { return }
                statistics.invariantChecks += 1
                if reopened != before {
                    if reopened.snapshot == before.snapshot && reopened.cursors == before.cursors && reopened.conflicts == before.conflicts {
                        // The interrupted edit survived: the app was told it failed, which is allowed.
                        account(device: device, edit: edit, before: before, after: reopened, returnedID: nil, interrupted: true)
                    } else {
                        fail(.replayEqualsState, "after a power cut inside \(name(device))'s \(edit.text), the journal replays to neither "
                            + "the state before nor after it: " + difference(before, reopened))
                    }
                }
            }
        }
    }

    func state(of device: Int) async -> StoreState? {
        try? await devices[device].store?.currentState()
    }

    func sync(device: Int, fault: SyncFault) async {
        statistics.syncs += 1
        let simulated = devices[device]
        do {
            switch fault {
            case .none: try await simulated.sync()
            case .loseRequest: _ = try await simulated.sync(injecting: .loseRequest, on: .any)
            case .loseReply: _ = try await simulated.sync(injecting: .loseReply, on: .push)
            case .duplicate: _ = try await simulated.sync(injecting: .duplicate, on: .push)
            case .transient: _ = try await simulated.sync(injecting: .transient(reason: "503 (simulated)", retryAfter: .milliseconds(1_000)), on: .any)
            case .permanent: _ = try await simulated.sync(injecting: .permanent(reason: "401 (simulated)"), on: .any)
            case .offline: _ = try await simulated.sync(injecting: .offline, on: .any)
            }
        } catch {
            fail(.replayEqualsState, "\(name(device)) could not sync: \(error)")
        }
        await syncEnded(device: device)
    }

    /// After a sync of `device` ended: a changed server is reconciled; a
    /// sync that pulled to the end is checked against the server.
    func syncEnded(device: Int) async {
        let simulated = devices[device]
        if case .failed(.serverMismatch)? = simulated.lastOutcome { await reconcile(device: device) }
        if case .ok? = simulated.lastOutcome {
            await checkSpaceMembership(device: device)
            await checkAttachmentsAvailable(device: device)
        }
    }

    /// The device found the server went back in time: the app reconciles.
    /// No record the device showed may vanish: each is kept, or was
    /// deleted by the server (another writer's deletion the backup held).
    func reconcile(device: Int) async {
        let simulated = devices[device]
        guard let engine = simulated.engine, let store = simulated.store else { return }
        statistics.reconciliations += 1
        let earlier = try? await store.currentState()
        let before = earlier.map { state in
            Set((state.snapshot.keys.map { $0 } + Array(state.outbox.keys)).filter { state.visibleFields(of: $0) != nil })
        } ?? []
        let rejectedBefore = Set((earlier?.rejections ?? []).map(\.operation.id))
        // A record whose edit is quarantined is hidden by the quarantine, not lost: it is still queued.
        func accounted(_ key: RecordKey, in state: StoreState) -> Bool {
            state.visibleFields(of: key) != nil || state.outbox.operations(on: key).contains { $0.quarantined }
        }
        let outcome = await engine.reconcileWithServer()
        // A renamed operation's fate is its new id's.
        let renames = await engine.lastReconciliation.renames
        for rename in renames where ledger[rename.from] != nil {
            ledger[rename.from]!.state = .coalesced(into: rename.to)
        }
        // A renamed deletion (sent, or quarantined) is the same deletion under its new id.
        for rename in renames {
            for (key, deletion) in deletions[device] where deletion.operationID == rename.from {
                deletions[device][key]!.operationID = rename.to
            }
        }
        guard let state = try? await store.currentState() else { return }
        // Re-uploads are the reconciliation's own operations: account for them like the app's.
        for entry in state.outbox.operations where ledger[entry.id] == nil {
            ledger[entry.id] = LedgerEntry(device: device, text: "\(name(device)) \(entry.operation.kind) \(entry.operation.entity) "
                + "\(entry.operation.recordID) (queued by a reconciliation, step \(currentStep))", step: currentStep, state: .open)
            openIDs[device].append(entry.id)
        }
        guard case .ok = outcome else { return }
        let transport = server.transport(device: "checker", user: simulated.user)
        for key in before.sorted(by: <) where !accounted(key, in: state) {
            statistics.invariantChecks += 1
            // A deletion the server holds (a tombstone) stands, as from any pull.
            let page = try? await transport.pull(PullRequest(cursors: [key.kind: nil], limit: 10_000, isResync: true,
                                                             spaces: configuration.users > 1 ? [:] : nil))
            if page?.rows.contains(where: { $0.key == key && $0.isTombstone }) == true { continue }
            // A shared space the user can no longer read is gone from the
            // device with its records, as from any pull.
            if !key.space.isPersonal, state.spaces[key.space] == nil { continue }
            // A re-upload refused for good is surfaced as a rejection, not lost
            // silently: a file neither this device nor the restored server holds.
            if state.rejections.contains(where: { $0.operation.key == key && !rejectedBefore.contains($0.operation.id) }) { continue }
            fail(.nothingLost, "\(name(device)) showed \(key.kind) \(key.id) before reconciling with the restored server, and not after")
            return
        }
    }

    /// The in-flight operations' records, and an edit of one of them chosen by `choice`.
    func inFlightChoice(device: Int, choice: UInt64) async -> SimulationEdit? {
        guard let store = devices[device].store, let queued = try? await store.outboxOperations() else { return nil }
        var keys: [RecordKey] = []
        for entry in queued where await store.isInFlight(entry.id) { if !keys.contains(entry.key) { keys.append(entry.key) } }
        guard !keys.isEmpty else { return nil }
        var random = SeededGenerator(seed: choice)
        let key = keys[Int.random(in: 0..<keys.count, using: &random)]
        let visible = ((try? await store.record(key.kind, id: key.id, in: key.space)) ?? nil) != nil
        if !visible {
            return .create(kind: key.kind, id: key.id, fields: key.kind == "pin" ? ["name": .string("Again")] : ["text": .string("again"), "done": .bool(false)],
                           space: key.space)
        }
        if Int.random(in: 0..<100, using: &random) < 65 { return .delete(kind: key.kind, id: key.id, space: key.space) }
        return .update(kind: key.kind, id: key.id, fields: key.kind == "pin" ? ["rating": .int(Int64.random(in: 1...5, using: &random))]
                                                                              : ["done": .bool(true)], space: key.space)
    }

    func inFlightEdit(device: Int, choice: UInt64, loseReply: Bool) async {
        let simulated = devices[device]
        statistics.syncs += 1
        let ended: SyncOutcome?
        do { ended = try await simulated.syncHoldingPush() } catch {
            fail(.replayEqualsState, "\(name(device)) could not sync: \(error)")
            return
        }
        guard ended == nil else { return }
        if let edit = await inFlightChoice(device: device, choice: choice) { _ = await makeEdit(device: device, edit) }
        _ = try? await simulated.release(deliverReply: !loseReply)
    }

    func crashMidRequest(device: Int, choice: UInt64?, powerSeed: UInt64) async {
        let simulated = devices[device]
        statistics.syncs += 1
        var ended: SyncOutcome?
        do {
            ended = try await simulated.syncHoldingPush()
            if ended != nil { ended = try await simulated.sync(.hold) }
        } catch {
            fail(.replayEqualsState, "\(name(device)) could not sync: \(error)")
            return
        }
        if ended == nil, let choice, let edit = await inFlightChoice(device: device, choice: choice) {
            _ = await makeEdit(device: device, edit)
        }
        let before = await state(of: device)
        await simulated.crash(.random(seed: powerSeed))
        if ended == nil { statistics.crashesMidRequest += 1 }
        await restartAndCompare(device: device, expected: before, what: ended == nil ? "a power cut while a request was held" : "a power cut at rest")
    }

    /// Makes one edit if it applies; records it in the ledger when the store acknowledges it.
    func makeEdit(device: Int, _ edit: SimulationEdit) async -> Bool {
        guard let store = devices[device].store, let before = try? await store.currentState() else { return false }
        let key = edit.key
        let visible = before.visibleFields(of: key) != nil
        var returnedID: OperationID?
        let applies: Bool
        if case .create = edit { applies = !visible } else { applies = visible }
        do {
            // Files first, as an app adds a file before the edit that refers to it.
            if applies { try await attachFiles(of: edit, device: device, store: store) }
            switch edit {
            case .create(let kind, let id, let fields, let space):
                guard !visible else { return false }
                if kind == SimulationNote.kind, space.isPersonal, let typed = await typedNoteCreate(device: device, id: id, fields: fields) {
                    returnedID = try await typed(store).operation
                } else {
                    try await store.create(kind, id: id, fields: fields, in: space)
                }
            case .update(let kind, let id, let fields, let space) where kind == SimulationNote.kind && space.isPersonal:
                guard visible else { return false }
                // Notes are edited as the app's model: read, change, queue what changed.
                guard let edit = try await typedNoteUpdate(device: device, store: store, id: id, fields: fields) else { return false }
                returnedID = edit.operation
            case .update(let kind, let id, let fields, let space):
                guard visible else { return false }
                returnedID = try await store.update(kind, id: id, changes: fields, in: space).operation
            case .delete(let kind, let id, let space):
                guard visible else { return false }
                returnedID = try await store.delete(kind, id: id, in: space).operation
            }
        } catch {
            return false
        }
        statistics.operations += 1
        guard let after = try? await store.currentState() else { return true }
        account(device: device, edit: edit, before: before, after: after, returnedID: returnedID, interrupted: false)
        await checkModelVersions(device: device, store: store, before: before, after: after)
        return true
    }

    /// The insert of a note as the device's model makes it, or nil when `fields` is not a whole note.
    func typedNoteCreate(device: Int, id: String, fields: [String: FieldValue]) async
        -> (@Sendable (LocalStore) async throws -> Edit)? {
        guard case .string(let text)? = fields["text"], case .bool(let done)? = fields["done"] else { return nil }
        if Simulation.modelVersion(ofDevice: device) >= 2 {
            var pinned = false
            if case .bool(let flag)? = fields["pinned"] { pinned = flag }
            let note = SimulationNoteV2(id: id, body: text, done: done, pinned: pinned)
            return { store in try await store.insert(note) }
        }
        let note = SimulationNote(id: id, text: text, done: done)
        return { store in try await store.insert(note) }
    }

    /// Updates note `id` through the device's model, setting what `fields` names;
    /// nil when nothing changed. A note that does not read as the model breaks
    /// the model-versions invariant.
    func typedNoteUpdate(device: Int, store: LocalStore, id: String, fields: [String: FieldValue]) async throws -> Edit? {
        func apply(_ name: String, _ body: (FieldValue) -> Void) { if let value = fields[name] { body(value) } }
        do {
            if Simulation.modelVersion(ofDevice: device) >= 2 {
                return try await store.update(SimulationNoteV2.self, id: id) { note in
                    apply("text") { if case .string(let text) = $0 { note.body = text } }
                    apply("done") { if case .bool(let done) = $0 { note.done = done } }
                    apply("pinned") { if case .bool(let pinned) = $0 { note.pinned = pinned } }
                }
            }
            return try await store.update(SimulationNote.self, id: id) { note in
                apply("text") { if case .string(let text) = $0 { note.text = text } }
                apply("done") { if case .bool(let done) = $0 { note.done = done } }
            }
        } catch {
            if case .undecodable(let report) = error {
                fail(.modelVersions, "\(name(device)) (model version \(Simulation.modelVersion(ofDevice: device))) cannot read \(report)")
            }
            throw error
        }
    }

    /// The model-versions invariant after an edit on `device`: an older model's new
    /// operation carries only fields its version knows, reading every note in the
    /// device's shape queues nothing, and every note reads.
    func checkModelVersions(device: Int, store: LocalStore, before: StoreState, after: StoreState) async {
        statistics.invariantChecks += 1
        let version = Simulation.modelVersion(ofDevice: device)
        let known: Set<String> = version >= 2 ? ["text", "done", "pinned"] : ["text", "done"]
        let earlier = Set(before.outbox.operations.map(\.id))
        for entry in after.outbox.operations where entry.key.kind == SimulationNote.kind && !earlier.contains(entry.id) {
            let unknown = Set(entry.operation.fields.keys).subtracting(known)
            if !unknown.isEmpty {
                fail(.modelVersions, "\(name(device)) on model version \(version) queued \(unknown.sorted()) on note \(entry.key.id), fields its version does not know")
            }
        }
        let unreadable: [UndecodableRecord]
        do {
            unreadable = version >= 2 ? try await store.fetchAll(SimulationNoteV2.self).undecodable
                : try await store.fetchAll(SimulationNote.self).undecodable
        } catch {
            return
        }
        if let first = unreadable.first { fail(.modelVersions, "\(name(device)) on model version \(version) cannot read \(first)") }
        if let now = try? await store.currentState(), now.outbox.operations != after.outbox.operations {
            fail(.modelVersions, "\(name(device)) queued an edit by reading its notes in model version \(version)'s shape")
        }
    }

    /// Records what an edit did to the outbox: its operation (open, merged
    /// into an earlier one, or cancelled with it), the operations it
    /// cancelled, and, for a delete, that the record must not come back.
    /// `interrupted`: the store said the edit failed, but it survived a crash.
    func account(device: Int, edit: SimulationEdit, before: StoreState, after: StoreState, returnedID: OperationID?, interrupted: Bool) {
        let sequence = counter.next()
        let key = edit.key
        let beforeIDs = Set(before.outbox.operations.map(\.id))
        let afterIDs = Set(after.outbox.operations.map(\.id))
        let newID = returnedID ?? after.outbox.operations.first { !beforeIDs.contains($0.id) }?.id
        let removed = before.outbox.operations.filter { !afterIDs.contains($0.id) }
        for entry in removed where ledger[entry.id] != nil {
            ledger[entry.id]!.state = .cancelled(sent: entry.sent)
        }
        let changedVisibility = (before.visibleFields(of: key) != nil) != (after.visibleFields(of: key) != nil)
        let madeSomething = newID != nil || !removed.isEmpty || after.outbox.operations != before.outbox.operations
        if interrupted && !madeSomething && !changedVisibility { return }
        let label = "\(name(device)) \(edit.text) (step \(currentStep)\(interrupted ? ", reported failed, survived the crash" : ""))"
        var newState: LedgerEntry.State?
        if let newID {
            // A file of an edit the journal holds is owed to the server from now on.
            if !edit.attachments.isEmpty {
                attachedContents[device, default: []].formUnion(edit.attachments.map(\.content))
                if !interrupted { statistics.attachmentsAdded += edit.attachments.count }
            }
            var state = LedgerEntry.State.open
            if !afterIDs.contains(newID) {
                // Merged into an earlier queued operation (its content changed), or cancelled with it.
                let merged = before.outbox.operations.first { afterIDs.contains($0.id) && after.outbox[$0.id]?.operation != $0.operation && $0.key == key }
                state = merged.map { .coalesced(into: $0.id) } ?? .cancelled(sent: false)
            }
            newState = state
            ledger[newID] = LedgerEntry(device: device, text: label, step: currentStep, state: state)
            openIDs[device].append(newID)
        } else if !interrupted {
            fail(.nothingLost, "\(label) was acknowledged but left no trace in the outbox")
            return
        }
        switch edit {
        case .create, .update:
            // The user sees the record and edits it: a deletion before this one is settled.
            deletions[device][key] = nil
        case .delete:
            // A delete cancelled together with a create that never left the device deleted only a local record.
            let cancelled: Bool
            if case .cancelled? = newState { cancelled = true } else { cancelled = newID == nil }
            let withUnsentCreate = cancelled && removed.contains { $0.key == key && $0.operation.kind == .create && !$0.sent }
            if !withUnsentCreate, let newID { deletions[device][key] = Deletion(operationID: newID, sequence: sequence, step: currentStep) }
        }
    }
}

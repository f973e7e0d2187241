import SyncJournalProtocol
import SyncJournalFieldCodec
import SyncJournalCore

/// Everything the store knows, rebuilt by folding journaled events: the last
/// server snapshot, the queued edits, the pull cursors, and the conflicts and
/// rejections waiting for the app.
///
/// ``apply(_:)`` is the one fold used both live (after each append) and by
/// replay, and it never fails: events are validated before they are journaled.
package struct StoreState: Sendable, Hashable {
    /// The server's rows as last reported (no tombstones: a tombstone removes the row).
    package private(set) var snapshot: [RecordKey: ServerRow] = [:]
    /// The queued local edits.
    package private(set) var outbox = Outbox()
    /// Where each kind's pull stopped in the personal space.
    package private(set) var cursors: [String: PullCursor] = [:]
    /// Where each kind's pull stopped in each shared space.
    package private(set) var spaceCursors: [SpaceID: [String: PullCursor]] = [:]
    /// The shared spaces the user is a member of, as the server last described them.
    package private(set) var spaces: [SpaceID: Space] = [:]
    /// Conflicts waiting for the app.
    package private(set) var conflicts: [ConflictRecord] = []
    /// Edits that will never reach the server, oldest first: refused by
    /// the user's role in their shared space, queued in a space lost since,
    /// or given up by versions before quarantine existed.
    package private(set) var rejections: [RejectionRecord] = []
    /// For records whose snapshot row moved on (a pull, a conflict) while
    /// edits made on an older copy are still queued: that older copy, the
    /// base a conflict's three-way merge needs.
    package private(set) var baseRows: [RecordKey: ServerRow] = [:]
    /// The server the device syncs with: its identity, the latest stamp
    /// taken from it, and a mismatch that stopped sync.
    package private(set) var server = KnownServer()

    /// An empty state.
    package init() {}

    /// Applies one journaled event.
    package mutating func apply(_ event: StoreEvent) {
        switch event {
        case .edit(let operation, let steps):
            if let (target, replacement) = Self.mergedIntoEarlier(operation, steps), !outbox.contains(operation.id) {
                // The edit merged into an earlier queued one and leaves the
                // queue in the same record: queuing it only to remove it
                // would end in the same queue, so only the earlier entry changes.
                outbox.update(target) { $0.operation = replacement }
                forgetBaseIfIdle(operation.key)
                return
            }
            outbox.append(OutboxOperation(operation: operation))
            for step in steps {
                switch step {
                case .remove(let id): outbox.remove(id)
                case .replace(let id, let replacement):
                    outbox.update(id) { $0.operation = replacement }
                }
            }
            if !steps.isEmpty { forgetBaseIfIdle(operation.key) }
        case .editBatch(let operations):
            for operation in operations { outbox.append(OutboxOperation(operation: operation)) }
        case .sent(let ids):
            for id in ids { outbox.setSent(id, true) }
        case .withdrawn(let ids):
            for id in ids { outbox.setSent(id, false) }
        case .acknowledged(let acks):
            for ack in acks {
                acknowledge(ack)
                server.saw(ack.row.updatedAt)
            }
        case .failed(let id, let reason, let permanent):
            guard let entry = outbox[id] else { return }
            if permanent {
                outbox.remove(id)
                rejections.append(RejectionRecord(operation: entry.operation, reason: reason, attempts: entry.attempts + 1))
                forgetBaseIfIdle(entry.key)
            } else {
                outbox.update(id) {
                    $0.attempts += 1
                    $0.lastError = reason
                }
            }
        case .conflicted(let id, let server):
            // Journaled before policies existed: the server's copy won.
            guard let entry = outbox[id] else { return }
            resolveConflict(entry, server: server, base: nil, resolution: ConflictRecord(operation: entry.operation, server: server).resolution)
        case .conflictResolved(let id, let server, let base, let resolution):
            guard let entry = outbox[id] else { return }
            resolveConflict(entry, server: server, base: base, resolution: resolution)
        case .conflictDismissed(let id):
            conflicts.removeAll { $0.id == id }
        case .conflictSettled(let id, let operation, let steps):
            apply(.conflictDismissed(id))
            apply(.edit(operation, compaction: steps))
        case .transaction(let edits):
            for edit in edits { apply(edit.event) }
        case .attemptFailed(let id, let kind, let reason, let quarantine):
            guard let entry = outbox[id] else { return }
            outbox.update(id) {
                $0.attempts += 1
                $0.lastError = reason
                $0.lastFailure = kind
                if kind != .transient { $0.permanentFailures += 1 }
                if quarantine { $0.quarantined = true }
            }
            // No readable row: the device stops showing its copy.
            if quarantine && kind == .deletedOrNoAccess { setSnapshot(entry.key, nil) }
        case .released(let id):
            outbox.update(id) {
                $0.quarantined = false
                $0.permanentFailures = 0
            }
        case .discarded(let id):
            if let entry = outbox.remove(id) { forgetBaseIfIdle(entry.key) }
        case .forgotten(let kind, let ids, let space):
            for id in ids { setSnapshot(RecordKey(kind: kind, id: id, space: space), nil) }
        case .pulled(let kind, let rows, let cursor, let space):
            for row in rows {
                setSnapshot(row.key, row)
                server.saw(row.updatedAt)
            }
            if let cursor {
                if space.isPersonal { cursors[kind] = cursor } else { spaceCursors[space, default: [:]][kind] = cursor }
                server.saw(cursor.updatedAt)
            }
        case .spaceDescribed(let space):
            spaces[space.id] = space
        case .spaceLost(let space):
            loseSpace(space)
        case .server(let change):
            switch change {
            case .learned(let identity):
                // From now on every stamp taken counts; those taken before
                // (from the same server, as far as the device knows) are in
                // its rows and cursors.
                server.identity = identity
                for row in snapshot.values { server.saw(row.updatedAt) }
                for cursor in cursors.values { server.saw(cursor.updatedAt) }
                for cursor in spaceCursors.values.flatMap(\.values) { server.saw(cursor.updatedAt) }
            case .mismatched(let mismatch): server.mismatch = mismatch
            case .adopted(let identity, let seenStamp):
                server = KnownServer(identity: identity, seenStamp: identity == nil ? nil : seenStamp, mismatch: nil)
            }
        case .reuploads(let plan):
            applyReuploads(plan)
        case .checkpoint(let part):
            switch part {
            case .rows(let rows): for row in rows { snapshot[row.key] = row }
            case .outbox(let entries): for entry in entries { outbox.append(entry) }
            case .cursors(let values): cursors.merge(values) { _, new in new }
            case .spaceCursors(let space, let values): spaceCursors[space, default: [:]].merge(values) { _, new in new }
            case .spaces(let values): for space in values { spaces[space.id] = space }
            case .server(let known): server = known
            case .conflicts(let values): conflicts += values
            case .baseRows(let rows): for row in rows { baseRows[row.key] = row }
            case .rejections(let values): rejections += values
            case .end: break
            }
        }
    }

    /// Queues a plan's re-uploads, each ahead of its record's queued edits
    /// (which keep their order and state), and gives queued edits their new bases.
    private mutating func applyReuploads(_ plan: ReuploadPlan) {
        for rebase in plan.rebases {
            outbox.update(rebase.operationID) { $0.operation.baseUpdatedAt = rebase.base }
        }
        for rename in plan.renames {
            guard let entry = outbox[rename.from], !outbox.contains(rename.to) else { continue }
            var operation = entry.operation
            operation.id = rename.to
            outbox.replace(rename.from, with: OutboxOperation(operation: operation, attempts: entry.attempts, lastError: entry.lastError,
                                                              permanentFailures: entry.permanentFailures, lastFailure: entry.lastFailure,
                                                              quarantined: entry.quarantined))
        }
        for upload in plan.uploads where !outbox.contains(upload.id) {
            let queued = outbox.operations(on: upload.key)
            for entry in queued { outbox.remove(entry.id) }
            outbox.append(OutboxOperation(operation: upload))
            for entry in queued { outbox.append(entry) }
        }
    }

    /// Puts `operation` in place of the queued operation `id` (same id, same
    /// record), as folding an edit merged into it does when no base row is
    /// kept: replay builds a run of such merges once, from the last.
    package mutating func replaceQueuedOperation(_ id: OperationID, with operation: JournalOperation) {
        outbox.update(id) { $0.operation = operation }
    }

    /// The compaction steps of an edit that merged into an earlier queued
    /// operation: that operation replaced, then the edit itself removed.
    private static func mergedIntoEarlier(_ operation: JournalOperation, _ steps: [CompactionStep]) -> (OperationID, JournalOperation)? {
        guard steps.count == 2, case .replace(let target, let replacement) = steps[0], case .remove(let removed) = steps[1],
              removed == operation.id, target != operation.id else { return nil }
        return (target, replacement)
    }

    /// Why applying `event` would break the state's rules, or `nil` when it
    /// can be applied. A store never journals such an event (it checks
    /// server rows before it keeps them); replay refuses one read from a file
    /// (``Replayer/Failure/inconsistent(sequence:reason:)``) instead of
    /// applying it. The rules: an operation replaced in the queue keeps its
    /// id and its record, and the server row an outcome keeps for a queued
    /// operation is a row of that operation's record.
    package func inconsistency(in event: StoreEvent) -> String? {
        switch event {
        case .acknowledged(let acks):
            for ack in acks {
                if let entry = outbox[ack.operationID], ack.row.key != entry.key {
                    return "operation \(ack.operationID) on \(entry.key) is acknowledged with a row of \(ack.row.key)"
                }
            }
        case .conflicted(let id, let server):
            if let entry = outbox[id], let server, server.key != entry.key {
                return "the conflict of operation \(id) on \(entry.key) carries a row of \(server.key)"
            }
        case .edit(let operation, let steps):
            return inconsistency(inEdit: operation, steps, queuedBefore: [:])
        case .transaction(let edits):
            // Each edit is checked against the queue with the edits before it
            // in the record: their operations count as queued.
            var queuedBefore: [OperationID: RecordKey] = [:]
            for edit in edits {
                if let reason = inconsistency(inEdit: edit.operation, edit.compaction, queuedBefore: queuedBefore) { return reason }
                queuedBefore[edit.operation.id] = edit.operation.key
            }
        case .conflictResolved(let id, let server, _, let resolution):
            guard let entry = outbox[id] else { break }
            if let server, server.key != entry.key {
                return "the conflict of operation \(id) on \(entry.key) carries a row of \(server.key)"
            }
            if let replacement = resolution.replacement, outbox[replacement.id] == nil, replacement.key != entry.key {
                return "the conflict of operation \(id) on \(entry.key) is resolved by a replacement on \(replacement.key)"
            }
        case .conflictSettled(_, let operation, let steps):
            return inconsistency(in: .edit(operation, compaction: steps))
        default:
            break
        }
        return nil
    }

    /// Why the compaction of an edit breaks the rules (a replacement keeps
    /// the id and the record of what it replaces), or `nil`. `queuedBefore`
    /// holds operations queued by earlier edits of the same record.
    private func inconsistency(inEdit operation: JournalOperation, _ steps: [CompactionStep],
                               queuedBefore: [OperationID: RecordKey]) -> String? {
        for case .replace(let id, let replacement) in steps {
            guard let key = outbox.key(of: id) ?? queuedBefore[id] ?? (id == operation.id ? operation.key : nil) else { continue }
            if replacement.id != id { return "compaction replaces operation \(id) by another id, \(replacement.id)" }
            if replacement.key != key { return "compaction replaces operation \(id) on \(key) by one on \(replacement.key)" }
        }
        return nil
    }

    /// A conflict resolved: the operation leaves the queue (or its
    /// replacement takes its place), the server's copy becomes the snapshot,
    /// and the conflict is kept for the app.
    private mutating func resolveConflict(_ entry: OutboxOperation, server: ServerRow?, base: ServerRow?, resolution: ConflictResolution) {
        if let replacement = resolution.replacement, outbox[replacement.id] == nil {
            outbox.replace(entry.id, with: OutboxOperation(operation: replacement))
        } else {
            outbox.remove(entry.id)
        }
        setSnapshot(entry.key, server)
        conflicts.append(ConflictRecord(operation: entry.operation, server: server, baseRow: base, resolution: resolution))
        forgetBaseIfIdle(entry.key)
    }

    /// Replaces the snapshot's row for `key` (a tombstone or `nil` removes
    /// it). If queued edits were made on the row being replaced, it is kept
    /// as their base copy first.
    private mutating func setSnapshot(_ key: RecordKey, _ row: ServerRow?) {
        let live = row.flatMap { $0.isTombstone ? nil : $0 }
        if let old = snapshot[key], old != live, baseRows[key] == nil,
           outbox.operations(on: key).contains(where: { $0.operation.baseUpdatedAt == old.updatedAt }) {
            baseRows[key] = old
        }
        snapshot[key] = live
    }

    /// Whether the state holds anything of shared space `space`: its
    /// description, a cursor, a row or a queued edit.
    package func holdsAnything(of space: SpaceID) -> Bool {
        if spaces[space] != nil || spaceCursors[space] != nil { return true }
        if snapshot.keys.contains(where: { $0.space == space }) { return true }
        var queued = false
        outbox.forEach { entry in
            if entry.key.space == space { queued = true }
            return !queued
        }
        return queued
    }

    /// The user is no longer a member of `space`: what the device holds of
    /// it leaves (its rows, the bases of its edits, its cursors and its
    /// description), and each queued operation of it becomes a rejection,
    /// in queue order: the server refuses them from now on, and the app
    /// can show what was not saved.
    private mutating func loseSpace(_ space: SpaceID) {
        guard !space.isPersonal else { return }
        for key in snapshot.keys where key.space == space { snapshot[key] = nil }
        for key in baseRows.keys where key.space == space { baseRows[key] = nil }
        spaceCursors[space] = nil
        spaces[space] = nil
        var refused: [OutboxOperation] = []
        outbox.forEach { entry in
            if entry.key.space == space { refused.append(entry) }
            return true
        }
        for entry in refused {
            outbox.remove(entry.id)
            rejections.append(RejectionRecord(operation: entry.operation, reason: SpaceWriteRefusal.noAccess(space).reason + ": membership ended",
                                              attempts: entry.attempts))
        }
    }

    private mutating func forgetBaseIfIdle(_ key: RecordKey) {
        // Most states keep no base rows: skip hashing the key then.
        if !baseRows.isEmpty && baseRows[key] != nil && outbox.operations(on: key).isEmpty { baseRows[key] = nil }
    }

    /// The server's copy `entry` was made on, if the device still knows it.
    package func baseRow(for entry: OutboxOperation) -> ServerRow? {
        guard let base = entry.operation.baseUpdatedAt else { return nil }
        if let row = baseRows[entry.key], row.updatedAt == base { return row }
        if let row = snapshot[entry.key], row.updatedAt == base { return row }
        return nil
    }

    /// The server applied an operation: it leaves the queue, the snapshot
    /// takes the server's copy, and later queued edits of the same record,
    /// made on top of this one, take its new stamp as their base.
    private mutating func acknowledge(_ ack: Acknowledgement) {
        guard let (slot, recordStillQueued) = outbox.removeNoting(ack.operationID) else { return }
        let key = slot.operation.key
        // A resend answered from the server's memory carries the row as it
        // was when the operation was first applied: when a pull has brought
        // a newer copy since, or the record's deletion (an update made on a
        // server copy that the snapshot no longer holds), that row is history
        // and never takes the record back.
        let pulledDeletion = slot.operation.kind == .update && slot.operation.baseUpdatedAt != nil
            && !ack.row.isTombstone && snapshot[key] == nil
        if let held = snapshot[key], held.updatedAt > ack.row.updatedAt {
        } else if !pulledDeletion {
            if ack.row.isTombstone { snapshot[key] = nil } else { snapshot[key] = ack.row }
        }
        // Most acknowledged operations are the last of their record: no second lookup then.
        if recordStillQueued {
            for later in outbox.operations(on: key) where later.operation.kind != .create {
                outbox.update(later.id) { $0.operation.baseUpdatedAt = ack.row.updatedAt }
            }
        }
        if !baseRows.isEmpty { baseRows[key] = nil }
    }

    /// The record as the app sees it: the server's copy with the queued edits
    /// applied in order; `nil` if it does not exist or is deleted.
    package func visibleFields(of key: RecordKey) -> [String: FieldValue]? {
        var fields = snapshot[key]?.fields
        for entry in outbox.operations(on: key) where !entry.quarantined {
            entry.operation.apply(to: &fields)
        }
        return fields
    }

    /// The model version the app sees for `key`: the highest of the
    /// server row's and those of the queued edits it shows (a quarantined
    /// edit shows nothing), so a local edit by a newer version counts at once.
    package func visibleModelVersion(of key: RecordKey) -> Int? {
        var version = snapshot[key]?.modelVersion
        for entry in outbox.operations(on: key) where !entry.quarantined {
            version = JournalOperation.highestModelVersion(version, entry.operation.modelVersion)
        }
        return version
    }

    /// The record the app sees for `key`, whose visible fields are `fields`.
    package func storeRecord(_ key: RecordKey, fields: [String: FieldValue]) -> StoreRecord {
        StoreRecord(kind: key.kind, id: key.id, space: key.space, fields: fields, serverUpdatedAt: snapshot[key]?.updatedAt,
                    hasPendingChanges: !outbox.operations(on: key).isEmpty, modelVersion: visibleModelVersion(of: key))
    }

    /// The base a new update or delete of `key` gets: the base of the last
    /// queued edit of the record (the server stamp the device had before its
    /// first local edit), or the snapshot's stamp when nothing is queued.
    /// `nil` for a record the server has not confirmed. Never a device time.
    package func base(for key: RecordKey) -> Int64? {
        if let last = outbox.operations(on: key).last { return last.operation.baseUpdatedAt }
        return snapshot[key]?.updatedAt
    }

    /// The part of this state that concerns `keys`: their snapshot rows,
    /// base rows and queued operations (in queue order). Edits of those
    /// records are decided against it exactly as against the whole state,
    /// at a cost that does not grow with the rest of the store.
    package func restricted(to keys: some Sequence<RecordKey>) -> StoreState {
        var part = StoreState()
        for key in Set(keys) {
            part.snapshot[key] = snapshot[key]
            part.baseRows[key] = baseRows[key]
            for entry in outbox.operations(on: key) { part.outbox.append(entry) }
        }
        return part
    }

    /// Counts of what the state holds (for checkpoint thresholds).
    package var liveItemCount: Int {
        snapshot.count + outbox.count + conflicts.count + rejections.count + cursors.count + baseRows.count
            + spaceCursors.count + spaces.count
    }

    /// The checkpoint parts that rebuild this state, each under `partBytes` of payload where possible.
    package func checkpointParts(partBytes: Int = 1 << 20) -> [CheckpointPart] {
        var parts: [CheckpointPart] = []
        forEachCheckpointPart(partBytes: partBytes) { part in
            parts.append(part)
            return true
        }
        return parts
    }

    /// Makes the parts of ``checkpointParts(partBytes:)`` one after another
    /// and hands each to `body` as soon as it is complete, until `body`
    /// returns false; so a checkpoint is written while the rest is made,
    /// never holding all of it.
    package func forEachCheckpointPart(partBytes: Int = 1 << 20, _ body: (CheckpointPart) -> Bool) {
        var going = true
        func chunked<T>(_ items: some Sequence<T>, size: (T) -> Int, make: ([T]) -> CheckpointPart) {
            guard going else { return }
            var chunk: [T] = []
            var bytes = 0
            for item in items {
                let itemBytes = size(item)
                if !chunk.isEmpty && bytes + itemBytes > partBytes {
                    going = body(make(chunk))
                    if !going { return }
                    chunk.removeAll(keepingCapacity: true)
                    bytes = 0
                }
                chunk.append(item)
                bytes += itemBytes
            }
            if !chunk.isEmpty { going = body(make(chunk)) }
        }
        chunked(snapshot.values.sorted { $0.key < $1.key }, size: { Self.estimate($0.fields) + 64 }, make: { .rows($0) })
        guard going else { return }
        // The queue lies in queue order: it is chunked as it is walked, never
        // copied whole into one array as large as the live state.
        var queued: [OutboxOperation] = []
        var queuedBytes = 0
        outbox.forEach { entry in
            let itemBytes = Self.estimate(entry.operation.fields) + 128
            if !queued.isEmpty && queuedBytes + itemBytes > partBytes {
                going = body(.outbox(queued))
                if !going { return false }
                queued.removeAll(keepingCapacity: true)
                queuedBytes = 0
            }
            queued.append(entry)
            queuedBytes += itemBytes
            return true
        }
        guard going else { return }
        if !queued.isEmpty { going = body(.outbox(queued)) }
        queued = []
        if going && !cursors.isEmpty { going = body(.cursors(cursors)) }
        for space in spaceCursors.keys.sorted(by: <) where going && !(spaceCursors[space] ?? [:]).isEmpty {
            going = body(.spaceCursors(space, spaceCursors[space] ?? [:]))
        }
        if going && !spaces.isEmpty { going = body(.spaces(spaces.values.sorted { $0.id < $1.id })) }
        if going && server.needsCheckpointPart { going = body(.server(server)) }
        chunked(baseRows.values.sorted { $0.key < $1.key }, size: { Self.estimate($0.fields) + 64 }, make: { .baseRows($0) })
        chunked(conflicts, size: { Self.estimate($0.operation.fields) + Self.estimate($0.server?.fields ?? [:])
            + Self.estimate($0.baseRow?.fields ?? [:]) + Self.estimate($0.resolution.replacement?.fields ?? [:]) + 320 }, make: { .conflicts($0) })
        chunked(rejections, size: { Self.estimate($0.operation.fields) + $0.reason.utf8.count + 128 }, make: { .rejections($0) })
        if going { _ = body(.end(rows: snapshot.count, operations: outbox.count, conflicts: conflicts.count, rejections: rejections.count)) }
    }

    /// The bytes a nested value takes in a record.
    private static func encodedSize(_ value: FieldValue) -> Int { value.encodedLength }

    private static func estimate(_ fields: [String: FieldValue]) -> Int {
        fields.reduce(0) { total, field in
            let value: Int
            switch field.value {
            case .string(let s): value = s.utf8.count
            case .bytes(let b): value = b.count
            case .stringSet(let set): value = set.reduce(0) { $0 + $1.utf8.count + 2 }
            case .array, .object: value = Self.encodedSize(field.value)
            default: value = 10
            }
            return total + field.key.utf8.count + value + 4
        }
    }
}

import SyncJournalProtocol

extension StoreState {
    /// Appends to `keys` the records whose visible state `event` may change
    /// (their fields, existence, server stamp or pending mark). Asked before
    /// the event is applied: it reads the queue to learn an operation's record.
    package func collectKeys(touchedBy event: StoreEvent, into keys: inout [RecordKey]) {
        switch event {
        case .edit(let operation, _), .conflictSettled(_, let operation, _):
            keys.append(operation.key)
        case .editBatch(let operations):
            for operation in operations { keys.append(operation.key) }
        case .transaction(let edits):
            for edit in edits { keys.append(edit.operation.key) }
        case .acknowledged(let acks):
            // An acknowledgement's row is a row of its operation's record (checked before it is journaled).
            for ack in acks { keys.append(ack.row.key) }
        case .failed(let id, _, let permanent):
            if permanent, let key = outbox.key(of: id) { keys.append(key) }
        case .attemptFailed(let id, _, _, let quarantine):
            if quarantine, let key = outbox.key(of: id) { keys.append(key) }
        case .conflicted(let id, _), .released(let id), .discarded(let id):
            if let key = outbox.key(of: id) { keys.append(key) }
        case .conflictResolved(let id, _, _, let resolution):
            let key = outbox.key(of: id)
            if let key { keys.append(key) }
            if let replacement = resolution.replacement?.key, replacement != key { keys.append(replacement) }
        case .forgotten(let kind, let ids, let space):
            for id in ids { keys.append(RecordKey(kind: kind, id: id, space: space)) }
        case .pulled(_, let rows, _, _):
            for row in rows { keys.append(row.key) }
        case .spaceLost(let space):
            for key in snapshot.keys where key.space == space { keys.append(key) }
            outbox.forEach { entry in
                if entry.key.space == space { keys.append(entry.key) }
                return true
            }
        case .checkpoint(let part):
            switch part {
            case .rows(let rows): for row in rows { keys.append(row.key) }
            case .outbox(let entries): for entry in entries { keys.append(entry.key) }
            case .cursors, .spaceCursors, .spaces, .conflicts, .baseRows, .rejections, .end, .server: break
            }
        case .reuploads(let plan):
            for upload in plan.uploads { keys.append(upload.key) }
            for rebase in plan.rebases { if let key = outbox.key(of: rebase.operationID) { keys.append(key) } }
            for rename in plan.renames { if let key = outbox.key(of: rename.from) { keys.append(key) } }
        case .sent, .withdrawn, .conflictDismissed, .server, .spaceDescribed:
            break
        }
    }
}

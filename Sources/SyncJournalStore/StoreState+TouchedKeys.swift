import SyncJournalProtocol

extension StoreState {
    /// The records whose visible copy, pending flag or queue `event` may
    /// change, asked of the state *before* the event applies (an operation
    /// that leaves the queue is still found in it). Every key of a
    /// transaction is included. Events that change no record (sent marks,
    /// a dismissed conflict, checkpoint parts) touch none.
    package func keysTouched(by event: StoreEvent) -> Set<RecordKey> {
        switch event {
        case .edit(let operation, _): return [operation.key]
        case .editBatch(let operations): return Set(operations.map(\.key))
        case .transaction(let edits): return Set(edits.map(\.operation.key))
        case .conflictSettled(_, let operation, _): return [operation.key]
        case .acknowledged(let acks):
            var keys = Set(acks.map(\.row.key))
            for ack in acks { if let key = outbox.key(of: ack.operationID) { keys.insert(key) } }
            return keys
        case .conflicted(let id, let server), .conflictResolved(let id, let server, _, _):
            var keys: Set<RecordKey> = server.map { [$0.key] } ?? []
            if let key = outbox.key(of: id) { keys.insert(key) }
            return keys
        case .failed(let id, _, _), .attemptFailed(let id, _, _, _), .released(let id), .discarded(let id):
            return outbox.key(of: id).map { [$0] } ?? []
        case .pulled(_, let rows, _): return Set(rows.map(\.key))
        case .forgotten(let kind, let ids): return Set(ids.map { RecordKey(kind: kind, id: $0) })
        case .sent, .withdrawn, .conflictDismissed, .checkpoint: return []
        }
    }
}

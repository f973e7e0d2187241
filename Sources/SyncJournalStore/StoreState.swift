/// Everything the store knows, rebuilt by folding journaled events: the last
/// server snapshot, the queued edits, the pull cursors, and the conflicts and
/// rejections waiting for the app.
///
/// ``apply(_:)`` is the one fold used both live (after each append) and by
/// replay, and it never fails: events are validated before they are journaled.
public struct StoreState: Sendable, Hashable {
    /// The server's rows as last reported (no tombstones: a tombstone removes the row).
    public private(set) var snapshot: [RecordKey: ServerRow] = [:]
    /// The queued local edits.
    public private(set) var outbox = Outbox()
    /// Where each kind's pull stopped.
    public private(set) var cursors: [String: PullCursor] = [:]
    /// Conflicts waiting for the app.
    public private(set) var conflicts: [ConflictRecord] = []
    /// Rejections waiting for the app.
    public private(set) var rejections: [RejectionRecord] = []

    /// An empty state.
    public init() {}

    /// Applies one journaled event.
    public mutating func apply(_ event: StoreEvent) {
        switch event {
        case .edit(let operation, let steps):
            outbox.append(OutboxOperation(operation: operation))
            for step in steps {
                switch step {
                case .remove(let id): outbox.remove(id)
                case .replace(let id, let replacement):
                    outbox.update(id) { $0.operation = replacement }
                }
            }
        case .editBatch(let operations):
            for operation in operations { outbox.append(OutboxOperation(operation: operation)) }
        case .sent(let ids):
            for id in ids { outbox.update(id) { $0.sent = true } }
        case .withdrawn(let ids):
            for id in ids { outbox.update(id) { $0.sent = false } }
        case .acknowledged(let acks):
            for ack in acks { acknowledge(ack) }
        case .failed(let id, let reason, let permanent):
            guard let entry = outbox[id] else { return }
            if permanent {
                outbox.remove(id)
                rejections.append(RejectionRecord(operation: entry.operation, reason: reason, attempts: entry.attempts + 1))
            } else {
                outbox.update(id) {
                    $0.attempts += 1
                    $0.lastError = reason
                }
            }
        case .conflicted(let id, let server):
            guard let entry = outbox.remove(id) else { return }
            conflicts.append(ConflictRecord(operation: entry.operation, server: server))
            // The server's copy wins (the default policy): the snapshot takes it.
            if let server, !server.isTombstone { snapshot[entry.key] = server } else { snapshot[entry.key] = nil }
        case .pulled(let kind, let rows, let cursor):
            for row in rows {
                if row.isTombstone { snapshot[row.key] = nil } else { snapshot[row.key] = row }
            }
            if let cursor { cursors[kind] = cursor }
        case .checkpoint(let part):
            switch part {
            case .rows(let rows): for row in rows { snapshot[row.key] = row }
            case .outbox(let entries): for entry in entries { outbox.append(entry) }
            case .cursors(let values): cursors.merge(values) { _, new in new }
            case .conflicts(let values): conflicts += values
            case .rejections(let values): rejections += values
            case .end: break
            }
        }
    }

    /// The server applied an operation: it leaves the queue, the snapshot
    /// takes the server's copy, and later queued edits of the same record,
    /// made on top of this one, take its new stamp as their base.
    private mutating func acknowledge(_ ack: Acknowledgement) {
        guard let entry = outbox.remove(ack.operationID) else { return }
        let key = entry.key
        if ack.row.isTombstone { snapshot[key] = nil } else { snapshot[key] = ack.row }
        for later in outbox.operations(on: key) where later.operation.kind != .create {
            outbox.update(later.id) { $0.operation.baseUpdatedAt = ack.row.updatedAt }
        }
    }

    /// The record as the app sees it: the server's copy with the queued edits
    /// applied in order; `nil` if it does not exist or is deleted.
    public func visibleFields(of key: RecordKey) -> [String: FieldValue]? {
        var fields = snapshot[key]?.fields
        for entry in outbox.operations(on: key) {
            switch entry.operation.kind {
            case .create: fields = entry.operation.fields
            case .update:
                if fields != nil { fields!.merge(entry.operation.fields) { _, new in new } }
            case .delete: fields = nil
            }
        }
        return fields
    }

    /// The base a new update or delete of `key` gets: the base of the last
    /// queued edit of the record (the server stamp the device had before its
    /// first local edit), or the snapshot's stamp when nothing is queued.
    /// `nil` for a record the server has not confirmed. Never a device time.
    public func base(for key: RecordKey) -> Int64? {
        if let last = outbox.operations(on: key).last { return last.operation.baseUpdatedAt }
        return snapshot[key]?.updatedAt
    }

    /// Counts of what the state holds (for checkpoint thresholds).
    public var liveItemCount: Int { snapshot.count + outbox.count + conflicts.count + rejections.count + cursors.count }

    /// The checkpoint parts that rebuild this state, each under `partBytes` of payload where possible.
    public func checkpointParts(partBytes: Int = 1 << 20) -> [CheckpointPart] {
        var parts: [CheckpointPart] = []
        func chunked<T>(_ items: [T], size: (T) -> Int, make: ([T]) -> CheckpointPart) {
            var chunk: [T] = []
            var bytes = 0
            for item in items {
                let itemBytes = size(item)
                if !chunk.isEmpty && bytes + itemBytes > partBytes {
                    parts.append(make(chunk))
                    chunk = []
                    bytes = 0
                }
                chunk.append(item)
                bytes += itemBytes
            }
            if !chunk.isEmpty { parts.append(make(chunk)) }
        }
        let rows = snapshot.values.sorted { $0.key < $1.key }
        chunked(rows, size: { Self.estimate($0.fields) + 64 }, make: { .rows($0) })
        chunked(outbox.operations, size: { Self.estimate($0.operation.fields) + 128 }, make: { .outbox($0) })
        if !cursors.isEmpty { parts.append(.cursors(cursors)) }
        chunked(conflicts, size: { Self.estimate($0.operation.fields) + Self.estimate($0.server?.fields ?? [:]) + 192 }, make: { .conflicts($0) })
        chunked(rejections, size: { Self.estimate($0.operation.fields) + $0.reason.utf8.count + 128 }, make: { .rejections($0) })
        parts.append(.end(rows: snapshot.count, operations: outbox.count, conflicts: conflicts.count, rejections: rejections.count))
        return parts
    }

    private static func estimate(_ fields: [String: FieldValue]) -> Int {
        fields.reduce(0) { total, field in
            let value: Int
            switch field.value {
            case .string(let s): value = s.utf8.count
            case .bytes(let b): value = b.count
            case .stringSet(let set): value = set.reduce(0) { $0 + $1.utf8.count + 2 }
            default: value = 10
            }
            return total + field.key.utf8.count + value + 4
        }
    }
}

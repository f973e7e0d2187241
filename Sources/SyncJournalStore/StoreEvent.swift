import SyncJournalCore
import SyncJournalFieldCodec
import SyncJournalProtocol

/// A change to the store's state, as it is journaled. The live store appends
/// an event and then applies it with ``StoreState/apply(_:)``; replay applies
/// the same events read back, so the two cannot drift apart.
package enum StoreEvent: Sendable, Hashable {
    /// A local edit, with the compaction it caused (possibly none).
    case edit(JournalOperation, compaction: [CompactionStep])
    /// Several edits appended together (no compaction).
    case editBatch([JournalOperation])
    /// These operations may reach the server from now on.
    case sent([OperationID])
    /// The transport reported these never left the device (offline): they
    /// are unsent again, so a create among them can still be cancelled locally.
    case withdrawn([OperationID])
    /// The server applied these operations.
    case acknowledged([Acknowledgement])
    /// An attempt failed; a permanent failure takes the operation out of the
    /// queue for the rejections (written today for a refusal by the user's
    /// role in the operation's shared space; earlier versions wrote it for
    /// every failure).
    case failed(OperationID, reason: String, permanent: Bool)
    /// The server refused the operation because its copy changed; its copy wins.
    case conflicted(OperationID, server: ServerRow?)
    /// An attempt failed and the operation stays queued (transient failures
    /// count attempts only; others also count toward quarantine). With
    /// `quarantine` the operation is quarantined.
    case attemptFailed(OperationID, kind: FailureKind, reason: String, quarantine: Bool)
    /// The app asked to retry a quarantined operation: it is sent again with a fresh budget.
    case released(OperationID)
    /// The app discarded a queued (usually quarantined) operation.
    case discarded(OperationID)
    /// A conflict was found and resolved by a policy: the server's copy
    /// replaces the snapshot, and the operation leaves the queue or is
    /// replaced in place by the resolution's replacement.
    case conflictResolved(OperationID, server: ServerRow?, base: ServerRow?, resolution: ConflictResolution)
    /// The app dismissed a conflict (it leaves ``StoreState/conflicts``).
    case conflictDismissed(OperationID)
    /// The app settled a conflict with an edit of its own: the conflict is
    /// dismissed and the edit queued, in one record, so a torn write never
    /// keeps the dismissal without the edit.
    case conflictSettled(OperationID, edit: JournalOperation, compaction: [CompactionStep])
    /// The edits of one transaction, in the order they were staged, each with
    /// the compaction it caused: journaled as one record, so they become
    /// durable, visible and replayed together or not at all.
    case transaction([TransactionEdit])
    /// Rows of `kind` in `space` the server no longer has (found by a full re-pull).
    case forgotten(kind: String, ids: [String], space: SpaceID = .personal)
    /// A page of server rows of `kind` in `space` and the cursor after it, journaled together.
    case pulled(kind: String, rows: [ServerRow], cursor: PullCursor?, space: SpaceID = .personal)
    /// The server described a shared space the user is a member of (its
    /// name, the user's role, its members), newer than the one kept.
    case spaceDescribed(Space)
    /// The user's membership of a shared space ended (left, removed, or the
    /// space deleted): its rows, cursors and description leave the device,
    /// and its queued operations become rejections the app can show.
    case spaceLost(SpaceID)
    /// A part of a checkpoint.
    case checkpoint(CheckpointPart)
    /// What the device knows of its server changed (2.4).
    case server(ServerEvent)
    /// A reconciliation's re-uploads and rebased edits (2.4).
    case reuploads(ReuploadPlan)
}

extension StoreEvent {
    /// The simple events this one stands for (itself, except for
    /// ``conflictSettled(_:edit:compaction:)``: a dismissal and an edit; and
    /// ``transaction(_:)``: its edits, in order).
    package var parts: [StoreEvent] {
        switch self {
        case .conflictSettled(let id, let edit, let steps): return [.conflictDismissed(id), .edit(edit, compaction: steps)]
        case .transaction(let edits): return edits.map(\.event)
        default: return [self]
        }
    }
}

extension RecordType {
    /// An edit together with the compaction steps it caused.
    package static let compactedEdit = RecordType.compaction
}

extension StoreEvent {
    /// The record type this event is journaled as.
    package var recordType: RecordType {
        switch self {
        case .edit(_, let steps): return steps.isEmpty ? .operation : .compactedEdit
        case .editBatch: return .operationBatch
        case .sent: return .sentMarker
        case .withdrawn: return .sendWithdrawn
        case .acknowledged: return .acknowledgement
        case .failed: return .rejection
        case .conflicted: return .conflict
        case .pulled(_, _, _, let space): return space.isPersonal ? .pulledRows : .spaceRowsPulled
        case .checkpoint: return .checkpoint
        case .attemptFailed: return .attemptFailed
        case .released: return .quarantineReleased
        case .discarded: return .operationDiscarded
        case .conflictResolved: return .conflictResolved
        case .conflictDismissed: return .conflictDismissed
        case .conflictSettled: return .conflictSettled
        case .forgotten(_, _, let space): return space.isPersonal ? .rowsForgotten : .spaceRowsForgotten
        case .spaceDescribed: return .spaceDescribed
        case .spaceLost: return .spaceLost
        case .transaction: return .transaction
        case .server: return .serverIdentity
        case .reuploads: return .reuploads
        }
    }

    /// The payload bytes of `.edit(operation, compaction: steps)`, counted
    /// without encoding it: an edit is encoded once, into its record.
    package static func editPayloadLength(_ operation: JournalOperation, compaction steps: [CompactionStep]) -> Int {
        guard !steps.isEmpty else { return operation.encodedLength }
        return steps.reduce(operation.encodedLength + EncodedLength.varint(UInt64(steps.count))) { $0 + $1.encodedLength }
    }

    /// The event's payload (`journals/FORMAT.md`, section 4).
    package func encodedPayload() -> [UInt8] {
        var writer = ByteWriter(capacity: 128)
        switch self {
        case .edit(let operation, let steps):
            operation.encode(into: &writer)
            if !steps.isEmpty {
                writer.writeVarint(UInt64(steps.count))
                for step in steps { step.encode(into: &writer) }
            }
        case .editBatch(let operations):
            return JournalOperation.encodeBatch(operations)
        case .sent(let ids), .withdrawn(let ids):
            writer.writeVarint(UInt64(ids.count))
            for id in ids { id.encode(into: &writer) }
        case .acknowledged(let acks):
            writer.writeVarint(UInt64(acks.count))
            for ack in acks {
                ack.operationID.encode(into: &writer)
                ack.row.encode(into: &writer)
            }
        case .failed(let id, let reason, let permanent):
            id.encode(into: &writer)
            writer.writeUInt8(permanent ? 1 : 0)
            writer.writeString(reason)
        case .conflicted(let id, let server):
            id.encode(into: &writer)
            writer.writeUInt8(server == nil ? 0 : 1)
            server?.encode(into: &writer)
        case .pulled(let kind, let rows, let cursor, let space):
            if !space.isPersonal { space.encodeShared(into: &writer) }
            writer.writeString(kind)
            writer.writeUInt8(cursor == nil ? 0 : 1)
            cursor?.encode(into: &writer)
            writer.writeVarint(UInt64(rows.count))
            for row in rows { row.encode(into: &writer) }
        case .checkpoint(let part):
            part.encode(into: &writer)
        case .attemptFailed(let id, let kind, let reason, let quarantine):
            id.encode(into: &writer)
            writer.writeUInt8(kind.code)
            writer.writeUInt8(quarantine ? 1 : 0)
            writer.writeString(reason)
        case .released(let id), .discarded(let id), .conflictDismissed(let id):
            id.encode(into: &writer)
        case .conflictSettled(let id, let operation, let steps):
            id.encode(into: &writer)
            operation.encode(into: &writer)
            writer.writeVarint(UInt64(steps.count))
            for step in steps { step.encode(into: &writer) }
        case .conflictResolved(let id, let server, let base, let resolution):
            id.encode(into: &writer)
            writer.writeUInt8((server == nil ? 0 : 1) | (base == nil ? 0 : 2))
            server?.encode(into: &writer)
            base?.encode(into: &writer)
            resolution.encode(into: &writer)
        case .forgotten(let kind, let ids, let space):
            if !space.isPersonal { space.encodeShared(into: &writer) }
            writer.writeString(kind)
            writer.writeVarint(UInt64(ids.count))
            for id in ids { writer.writeString(id) }
        case .transaction(let edits):
            writer.writeVarint(UInt64(edits.count))
            for edit in edits {
                edit.operation.encode(into: &writer)
                writer.writeVarint(UInt64(edit.compaction.count))
                for step in edit.compaction { step.encode(into: &writer) }
            }
        case .server(let change):
            change.encode(into: &writer)
        case .reuploads(let plan):
            plan.encode(into: &writer)
        case .spaceDescribed(let space):
            space.encode(into: &writer)
        case .spaceLost(let space):
            space.encodeShared(into: &writer)
        }
        return writer.bytes
    }

    /// The record types that carry store events (built once: replay decodes every record).
    static let decodedTypes: Set<RecordType> = [.operation, .compactedEdit, .operationBatch, .sentMarker, .sendWithdrawn,
                                                .acknowledgement, .rejection, .conflict, .pulledRows, .checkpoint,
                                                .attemptFailed, .quarantineReleased, .operationDiscarded, .conflictResolved,
                                                .conflictDismissed, .conflictSettled, .rowsForgotten,
                                                .transaction, .serverIdentity, .reuploads,
                                                .spaceRowsPulled, .spaceRowsForgotten, .spaceDescribed, .spaceLost]

    /// Whether records of `type` carry store events: whether `type` is in ``decodedTypes``.
    static func carriesEvent(_ type: RecordType) -> Bool {
        switch type {
        case .operation, .compactedEdit, .operationBatch, .sentMarker, .sendWithdrawn, .acknowledgement, .rejection, .conflict,
             .pulledRows, .checkpoint, .attemptFailed, .quarantineReleased, .operationDiscarded, .conflictResolved,
             .conflictDismissed, .conflictSettled, .rowsForgotten,
             .transaction, .serverIdentity, .reuploads, .spaceRowsPulled, .spaceRowsForgotten, .spaceDescribed, .spaceLost:
            return true
        default:
            return false
        }
    }

    /// Whether the store understands records of `type` that are not
    /// skippable: the ones that carry an event, and salvaged records. A
    /// journal holding any other is read-only for this version.
    package static let isUnderstood: @Sendable (RecordType) -> Bool = { type in
        carriesEvent(type) || type == .salvaged
    }

    /// Decodes a verified record into an event; `nil` for record types that
    /// carry no store event (a skippable type this version does not know, a
    /// salvaged record).
    ///
    /// With `forFold`, an edit whose own compaction removes it comes back
    /// without its fields (they are validated, not built): folding the event
    /// reaches the same state, since the edit leaves the queue in the same
    /// record. The same payloads are refused, with the same failures.
    package static func decode(_ record: JournalRecord, forFold: Bool = false) throws(JournalEntry.DecodeError) -> StoreEvent? {
        func malformed(_ failure: ByteReader.Failure) -> JournalEntry.DecodeError {
            .malformed(sequence: record.sequence, offset: record.offset, type: record.type, failure)
        }
        // A switch, not `decodedTypes.contains`: no hashing per record.
        if !carriesEvent(record.type) {
            if record.type.isSkippable || record.type == .salvaged { return nil }
            throw .unsupportedType(sequence: record.sequence, offset: record.offset, type: record.type)
        }
        var reader = ByteReader(record.payload)
        do throws(ByteReader.Failure) {
            let event: StoreEvent
            switch record.type {
            case .operation:
                event = .edit(try JournalOperation.decode(from: &reader), compaction: [])
            case .compactedEdit:
                var operation = try JournalOperation.decodeAllButFields(from: &reader)
                let fieldsReader = reader
                let skipped = forFold && FieldListCodec.skipIfPlain(&reader)
                if !skipped {
                    reader = fieldsReader
                    operation.fields = try FieldListCodec.decode(from: &reader)
                }
                let count = try reader.readCount(minimumItemSize: 17)
                if count == 0 { throw .invalid("compacted edit without steps", at: reader.position) }
                var steps: [CompactionStep] = []
                steps.reserveCapacity(count)  // one allocation; the count is bounded by the payload
                var removesItself = false
                for _ in 0..<count {
                    let step = try CompactionStep.decode(from: &reader)
                    if case .remove(let id) = step, id == operation.id { removesItself = true }
                    steps.append(step)
                }
                if skipped && !removesItself {
                    var again = fieldsReader
                    operation.fields = try FieldListCodec.decode(from: &again)
                }
                event = .edit(operation, compaction: steps)
            case .operationBatch:
                return .editBatch(try JournalOperation.decodeBatch(record.payload))
            case .sentMarker, .sendWithdrawn:
                let count = try reader.readCount(minimumItemSize: 16)
                var ids: [OperationID] = []
                for _ in 0..<count { ids.append(try OperationID.decode(from: &reader)) }
                event = record.type == .sentMarker ? .sent(ids) : .withdrawn(ids)
            case .acknowledgement:
                let count = try reader.readCount(minimumItemSize: 20)
                var acks: [Acknowledgement] = []
                for _ in 0..<count {
                    let id = try OperationID.decode(from: &reader)
                    acks.append(Acknowledgement(operationID: id, row: try ServerRow.decode(from: &reader)))
                }
                event = .acknowledged(acks)
            case .rejection:
                let id = try OperationID.decode(from: &reader)
                let flagAt = reader.position
                let flag = try reader.readUInt8()
                if flag > 1 { throw .invalid("unknown failure flag", at: flagAt) }
                event = .failed(id, reason: try reader.readString(), permanent: flag == 1)
            case .conflict:
                let id = try OperationID.decode(from: &reader)
                let flagAt = reader.position
                let flag = try reader.readUInt8()
                if flag > 1 { throw .invalid("unknown conflict flag", at: flagAt) }
                event = .conflicted(id, server: flag == 1 ? try ServerRow.decode(from: &reader) : nil)
            case .pulledRows, .spaceRowsPulled:
                let space: SpaceID = record.type == .spaceRowsPulled ? try SpaceID.decodeShared(from: &reader) : .personal
                let kind = try reader.readString()
                let flagAt = reader.position
                let flag = try reader.readUInt8()
                if flag > 1 { throw .invalid("unknown cursor flag", at: flagAt) }
                let cursor: PullCursor? = flag == 1 ? try PullCursor.decode(from: &reader) : nil
                let count = try reader.readCount(minimumItemSize: 5)
                var rows: [ServerRow] = []
                for _ in 0..<count { rows.append(try ServerRow.decode(from: &reader)) }
                // A row of another space than its record's is malformed: replay would file it elsewhere.
                if let stray = rows.first(where: { $0.space != space }) {
                    throw .invalid("row \(stray.key) in a page of space \(space)", at: 0)
                }
                event = .pulled(kind: kind, rows: rows, cursor: cursor, space: space)
            case .checkpoint:
                event = .checkpoint(try CheckpointPart.decode(from: &reader))
            case .attemptFailed:
                let id = try OperationID.decode(from: &reader)
                let kindAt = reader.position
                guard let kind = FailureKind(code: try reader.readUInt8()) else { throw .invalid("unknown failure kind", at: kindAt) }
                let flagAt = reader.position
                let flag = try reader.readUInt8()
                if flag > 1 { throw .invalid("unknown quarantine flag", at: flagAt) }
                event = .attemptFailed(id, kind: kind, reason: try reader.readString(), quarantine: flag == 1)
            case .quarantineReleased, .operationDiscarded, .conflictDismissed:
                let id = try OperationID.decode(from: &reader)
                event = record.type == .quarantineReleased ? .released(id) : record.type == .operationDiscarded ? .discarded(id) : .conflictDismissed(id)
            case .conflictResolved:
                let id = try OperationID.decode(from: &reader)
                let flagsAt = reader.position
                let flags = try reader.readUInt8()
                if flags & ~3 != 0 { throw .invalid("unknown conflict flags", at: flagsAt) }
                let server = flags & 1 != 0 ? try ServerRow.decode(from: &reader) : nil
                let base = flags & 2 != 0 ? try ServerRow.decode(from: &reader) : nil
                event = .conflictResolved(id, server: server, base: base, resolution: try ConflictResolution.decode(from: &reader))
            case .conflictSettled:
                let id = try OperationID.decode(from: &reader)
                let operation = try JournalOperation.decode(from: &reader)
                let count = try reader.readCount(minimumItemSize: 17)
                var steps: [CompactionStep] = []
                for _ in 0..<count { steps.append(try CompactionStep.decode(from: &reader)) }
                event = .conflictSettled(id, edit: operation, compaction: steps)
            case .rowsForgotten, .spaceRowsForgotten:
                let space: SpaceID = record.type == .spaceRowsForgotten ? try SpaceID.decodeShared(from: &reader) : .personal
                let kind = try reader.readString()
                let count = try reader.readCount(minimumItemSize: 2)
                var ids: [String] = []
                for _ in 0..<count { ids.append(try reader.readString()) }
                event = .forgotten(kind: kind, ids: ids, space: space)
            case .spaceDescribed:
                event = .spaceDescribed(try Space.decode(from: &reader))
            case .spaceLost:
                event = .spaceLost(try SpaceID.decodeShared(from: &reader))
            case .transaction:
                // An operation takes at least 22 bytes (as in a batch) and its step count one more.
                let count = try reader.readCount(minimumItemSize: 23)
                if count == 0 { throw .invalid("empty transaction", at: 0) }
                var edits: [TransactionEdit] = []
                edits.reserveCapacity(count)
                for _ in 0..<count {
                    let operation = try JournalOperation.decode(from: &reader)
                    let stepCount = try reader.readCount(minimumItemSize: 17)
                    var steps: [CompactionStep] = []
                    for _ in 0..<stepCount { steps.append(try CompactionStep.decode(from: &reader)) }
                    edits.append(TransactionEdit(operation: operation, compaction: steps))
                }
                event = .transaction(edits)
            case .serverIdentity:
                event = .server(try ServerEvent.decode(from: &reader))
            case .reuploads:
                event = .reuploads(try ReuploadPlan.decode(from: &reader))
            default:
                return nil
            }
            try reader.expectEnd()
            return event
        } catch {
            throw malformed(error)
        }
    }
}

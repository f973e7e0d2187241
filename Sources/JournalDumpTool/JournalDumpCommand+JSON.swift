import Foundation
import SyncJournalCommandLine
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore

/// The `--json` rendering: one object per record, then the summary object.
extension JournalDumpCommand {
    static func operationJSON(_ op: JournalOperation) -> [(String, JSONText)] {
        var members: [(String, JSONText)] = [
            ("op", .string(op.kind.description)),
            ("opId", .string(op.id.description)),
            ("kind", .string(op.entity)),
            ("recordId", .string(op.recordID)),
            ("baseUpdatedAt", op.baseUpdatedAt.map { .int($0) } ?? .null),
            ("queuedAt", .int(op.queuedAt)),
        ]
        // Only when stated (format 2.3), so dumps of older journals read as before.
        if let version = op.modelVersion { members.append(("modelVersion", .int(Int64(version)))) }
        // Only for a shared space (format 2.5), so personal records dump as before.
        if let space = op.space.text { members.append(("space", .string(space))) }
        members.append(("fields", FieldSummary.json(op.fields)))
        return members
    }

    static func rowJSON(_ row: ServerRow) -> JSONText {
        var members: [(String, JSONText)] = [
            ("kind", .string(row.kind)),
            ("recordId", .string(row.id)),
            ("updatedAt", .int(row.updatedAt)),
            ("deletedAt", row.deletedAt.map { .int($0) } ?? .null),
        ]
        if let version = row.modelVersion { members.append(("modelVersion", .int(Int64(version)))) }
        if let space = row.space.text { members.append(("space", .string(space))) }
        members.append(("fields", FieldSummary.json(row.fields)))
        return .object(members)
    }

    /// `[("space", id)]` for a shared space, nothing for the personal one.
    static func spaceJSON(_ space: SpaceID) -> [(String, JSONText)] {
        space.text.map { [("space", .string($0))] } ?? []
    }

    /// A shared space's description: `id`, `name`, `role`, `version`, `members` (`user`, `role`).
    static func describedSpaceJSON(_ space: Space) -> JSONText {
        .object([("id", .string(space.id.description)), ("name", .string(space.name)), ("role", .string(space.role.description)),
                 ("version", .int(space.version)),
                 ("members", .array(space.members.map { .object([("user", .string($0.user)), ("role", .string($0.role.description))]) }))])
    }

    static func cursorJSON(_ cursor: PullCursor) -> JSONText {
        .object([("updatedAt", .int(cursor.updatedAt)), ("id", .string(cursor.id))])
    }

    static func cursorsJSON(_ cursors: [String: PullCursor]) -> JSONText {
        .object(cursors.keys.sorted(by: utf8Order).map { ($0, cursorJSON(cursors[$0]!)) })
    }

    /// An outbox entry as a checkpoint part holds it: the operation, then `sent`, `attempts` and `lastError`.
    static func outboxJSON(_ entry: OutboxOperation) -> JSONText {
        // The 1.1 members appear only when set, so 1.0 journals dump as they always did.
        let extended: [(String, JSONText)] = entry.permanentFailures == 0 && entry.lastFailure == nil && !entry.quarantined ? [] : [
            ("permanentFailures", .int(Int64(entry.permanentFailures))),
            ("lastFailure", entry.lastFailure.map { .string($0.description) } ?? .null),
            ("quarantined", .bool(entry.quarantined)),
        ]
        return .object(operationJSON(entry.operation) + [
            ("sent", .bool(entry.sent)),
            ("attempts", .int(Int64(entry.attempts))),
            ("lastError", entry.lastError.map { .string($0) } ?? .null),
        ] + extended)
    }

    /// An outbox entry of the rebuilt state as ``LocalStore/outboxStatus()`` lists it: the operation,
    /// then `state` (`queued`, `sent` or `quarantined`), `sent`, `attempts`, `permanentFailures`,
    /// `lastFailure` and `lastError`. (`in-flight` and the next attempt time exist only in a running engine.)
    static func statusJSON(_ entry: OutboxStatusEntry) -> JSONText {
        .object(operationJSON(entry.operation) + [
            ("state", .string(entry.state.description)),
            ("sent", .bool(entry.sent)),
            ("attempts", .int(Int64(entry.attempts))),
            ("permanentFailures", .int(Int64(entry.permanentFailures))),
            ("lastFailure", entry.lastFailure.map { .string($0.description) } ?? .null),
            ("lastError", entry.lastError.map { .string($0) } ?? .null),
        ])
    }

    static func conflictJSON(_ conflict: ConflictRecord) -> JSONText {
        .object([("operation", .object(operationJSON(conflict.operation))), ("server", conflict.server.map(rowJSON) ?? .null),
                 ("base", conflict.baseRow.map(rowJSON) ?? .null), ("shape", .string(conflict.shape.description)),
                 ("resolution", resolutionJSON(conflict.resolution))])
    }

    static func resolutionJSON(_ resolution: ConflictResolution) -> JSONText {
        .object([("strategy", .string(resolution.strategy.description)),
                 ("replacement", resolution.replacement.map { .object(operationJSON($0)) } ?? .null),
                 ("lostFields", .array(resolution.lostFields.map { .string($0) }))])
    }

    /// `{"kind":"differentServer","expected":…,"found":…}` or `{"kind":"behind","identity":…,"seenStamp":…,"latestStamp":…}`.
    static func mismatchJSON(_ mismatch: ServerMismatch) -> JSONText {
        switch mismatch {
        case .differentServer(let expected, let found):
            return .object([("kind", .string("differentServer")), ("expected", .string(expected.text)), ("found", .string(found.text))])
        case .behind(let identity, let seen, let latest):
            return .object([("kind", .string("behind")), ("identity", .string(identity.text)), ("seenStamp", .int(seen)),
                            ("latestStamp", .int(latest))])
        }
    }

    /// What the device knows of its server: `identity`, `seenStamp` and `mismatch` (each may be null).
    static func serverJSON(_ known: KnownServer) -> JSONText {
        .object([("identity", known.identity.map { .string($0.text) } ?? .null), ("seenStamp", known.seenStamp.map { .int($0) } ?? .null),
                 ("mismatch", known.mismatch.map(mismatchJSON) ?? .null)])
    }

    static func rejectionJSON(_ rejection: RejectionRecord) -> JSONText {
        .object([("operation", .object(operationJSON(rejection.operation))), ("reason", .string(rejection.reason)),
                 ("attempts", .int(Int64(rejection.attempts)))])
    }

    /// The members a store event adds to its record's JSON object.
    static func eventJSON(_ event: StoreEvent) -> [(String, JSONText)] {
        switch event {
        case .edit(let op, let steps):
            return operationJSON(op) + [("compaction", .array(steps.map { step in
                switch step {
                case .remove(let id): return .object([("step", .string("remove")), ("opId", .string(id.description))])
                case .replace(let id, let merged):
                    return .object([("step", .string("replace")), ("opId", .string(id.description)), ("with", .object(operationJSON(merged)))])
                }
            }))]
        case .editBatch(let ops):
            return [("operations", .array(ops.map { .object(operationJSON($0)) }))]
        case .sent(let ids), .withdrawn(let ids):
            return [("opIds", .array(ids.map { .string($0.description) }))]
        case .acknowledged(let acks):
            return [("acknowledgements", .array(acks.map { .object([("opId", .string($0.operationID.description)), ("row", rowJSON($0.row))]) }))]
        case .failed(let id, let reason, let permanent):
            return [("opId", .string(id.description)), ("permanent", .bool(permanent)), ("reason", .string(reason))]
        case .conflicted(let id, let server):
            return [("opId", .string(id.description)), ("server", server.map(rowJSON) ?? .null)]
        case .pulled(let kind, let rows, let cursor, let space):
            return spaceJSON(space) + [("kind", .string(kind)), ("cursor", cursor.map(cursorJSON) ?? .null), ("rows", .array(rows.map(rowJSON)))]
        case .spaceDescribed(let space):
            return [("space", describedSpaceJSON(space))]
        case .spaceLost(let space):
            return spaceJSON(space)
        case .attemptFailed(let id, let kind, let reason, let quarantine):
            return [("opId", .string(id.description)), ("failure", .string(kind.description)), ("quarantine", .bool(quarantine)),
                    ("reason", .string(reason))]
        case .released(let id), .discarded(let id), .conflictDismissed(let id):
            return [("opId", .string(id.description))]
        case .conflictSettled(let id, let op, let steps):
            return [("conflict", .string(id.description))] + eventJSON(.edit(op, compaction: steps))
        case .conflictResolved(let id, let server, let base, let resolution):
            return [("opId", .string(id.description)), ("server", server.map(rowJSON) ?? .null), ("base", base.map(rowJSON) ?? .null),
                    ("resolution", resolutionJSON(resolution))]
        case .forgotten(let kind, let ids, let space):
            return spaceJSON(space) + [("kind", .string(kind)), ("recordIds", .array(ids.map { .string($0) }))]
        case .transaction(let edits):
            return [("edits", .array(edits.map { .object(eventJSON($0.event)) }))]
        case .server(let change):
            switch change {
            case .learned(let identity):
                return [("change", .string("learned")), ("identity", .string(identity.text))]
            case .mismatched(let mismatch):
                return [("change", .string("mismatched")), ("mismatch", mismatchJSON(mismatch))]
            case .adopted(let identity, let seenStamp):
                return [("change", .string("adopted")), ("identity", identity.map { .string($0.text) } ?? .null),
                        ("seenStamp", seenStamp.map { .int($0) } ?? .null)]
            }
        case .reuploads(let plan):
            return [("uploads", .array(plan.uploads.map { .object(operationJSON($0)) })),
                    ("rebases", .array(plan.rebases.map { .object([("opId", .string($0.operationID.description)), ("base", .int($0.base))]) })),
                    ("renames", .array(plan.renames.map { .object([("from", .string($0.from.description)), ("to", .string($0.to.description))]) }))]
        case .checkpoint(let part):
            switch part {
            case .baseRows(let rows): return [("part", .string("baseRows")), ("rows", .array(rows.map(rowJSON)))]
            case .rows(let rows): return [("part", .string("rows")), ("rows", .array(rows.map(rowJSON)))]
            case .server(let known): return [("part", .string("server")), ("server", serverJSON(known))]
            case .outbox(let entries): return [("part", .string("outbox")), ("outbox", .array(entries.map(outboxJSON)))]
            case .cursors(let cursors): return [("part", .string("cursors")), ("cursors", cursorsJSON(cursors))]
            case .spaceCursors(let space, let cursors):
                return [("part", .string("spaceCursors"))] + spaceJSON(space) + [("cursors", cursorsJSON(cursors))]
            case .spaces(let spaces): return [("part", .string("spaces")), ("spaces", .array(spaces.map(describedSpaceJSON)))]
            case .conflicts(let conflicts): return [("part", .string("conflicts")), ("conflicts", .array(conflicts.map(conflictJSON)))]
            case .rejections(let rejections): return [("part", .string("rejections")), ("rejections", .array(rejections.map(rejectionJSON)))]
            case .end(let rows, let operations, let conflicts, let rejections):
                return [("part", .string("end")), ("rows", .int(Int64(rows))), ("operations", .int(Int64(operations))),
                        ("conflicts", .int(Int64(conflicts))), ("rejections", .int(Int64(rejections)))]
            }
        }
    }

    /// The JSON object of one record (a decoding problem in place of its fields).
    package static func jsonLine(_ record: JournalRecord, _ entry: JournalEntry?, _ event: StoreEvent?, _ problem: String?) -> JSONText {
        var members: [(String, JSONText)] = [
            ("offset", .int(record.offset)),
            ("length", .int(Int64(record.length))),
            ("seq", .uint(record.sequence)),
            ("type", .string(record.type.name)),
        ]
        // Format 2 only: a 1.x record carries no horizon, and its line is the one 1.x dumps always had.
        if let horizon = record.syncHorizon { members.append(("horizon", .int(horizon))) }
        if let problem { members.append(("error", .string(problem))) }
        if let event { return .object(members + eventJSON(event)) }
        switch entry {
        case .operation(let op)?: members += operationJSON(op)
        case .batch(let ops)?: members.append(("operations", .array(ops.map { .object(operationJSON($0)) })))
        case .salvaged(let offset, let sequence, let type, let payload)?:
            members += [("originalOffset", .uint(offset)), ("originalSeq", .uint(sequence)),
                        ("originalType", .string(type.name)), ("payloadBytes", .int(Int64(payload.count)))]
        case .opaque?: members.append(("payloadBytes", .int(Int64(record.payload.count))))
        case nil: break
        }
        return .object(members)
    }

    /// The `{"summary": …}` object after the records.
    package static func jsonSummary(_ report: JournalScanReport, malformed: Int, unsupported: Int, recordsAfterDamage: Int) -> JSONText {
        var summary: [(String, JSONText)] = [
            ("records", .int(Int64(report.recordCount))),
            ("validBytes", .int(report.validBytes)),
            ("fileBytes", .int(report.fileBytes)),
            ("preallocatedBytes", .int(report.preallocatedBytes)),
            ("status", .string(report.status.name)),
            ("damageOffset", report.status.damageOffset.map { .int($0) } ?? .null),
            ("damage", report.status.damage.map { .string($0.description) } ?? .null),
        ]
        // Only for an unsupported journal, so the summary of any other keeps the members it always had.
        if case .unsupported(let offset, let reason) = report.status {
            summary += [("unsupportedOffset", .int(offset)), ("unsupportedReason", .string(reason.description))]
        }
        summary += [
            ("recordsByType", .object(report.recordsByType.sorted { $0.key < $1.key }.map { ($0.key.name, .int(Int64($0.value))) })),
            ("lastSeq", report.lastSequence.map { .uint($0) } ?? .null),
            ("validRecordsAfterDamage", .int(Int64(recordsAfterDamage))),
            ("malformedRecords", .int(Int64(malformed))),
            ("unsupportedRecords", .int(Int64(unsupported))),
        ]
        if let header = report.header {
            summary.append(("header", .object([
                ("version", .string("\(header.majorVersion).\(header.minorVersion)")),
                ("journalId", .string(header.journalID.description)),
                ("generation", .string(hex(header.generation))),
                ("continuesGeneration", header.continuesGeneration == 0 ? .null : .string(hex(header.continuesGeneration))),
                ("firstSeq", .uint(header.firstSequence)),
                ("createdAt", .string(timestamp(header.createdAtMilliseconds))),
            ])))
        } else {
            summary.append(("header", .null))
        }
        return .object([("summary", .object(summary))])
    }
}

import Foundation
import SyncJournalCommandLine
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore

/// The text rendering: the record table, the summary, the header line.
extension JournalDumpCommand {
    /// The heading of the record table. A format-2 journal's table has a
    /// `horizon` column after `seq`; a 1.x journal's records carry none, so
    /// its table is the one 1.x dumps always had.
    static func tableHeading(syncHorizons: Bool) -> String {
        pad("offset", 9, right: true) + "  " + pad("seq", 6, right: true) + "  "
            + (syncHorizons ? pad("horizon", 9, right: true) + "  " : "")
            + pad("type", 10) + pad("op", 7) + pad("kind", 10) + pad("record", 18) + pad("base", 15) + "fields\n"
    }

    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        if text.count >= width { return right ? text : text + " " }
        let fill = String(repeating: " ", count: width - text.count)
        return right ? fill + text : text + fill
    }

    /// A verified record as the dump shows it: the ``JournalEntry`` and, for
    /// the store's own records (sent markers, outcomes, pulled rows,
    /// checkpoints), their event.
    ///
    /// ``StoreEvent/decode(_:)`` is the authority on what a store record is,
    /// as it is for replay: a type ``JournalEntry`` does not list (the 1.1
    /// types `0x0009`…`0x000D`, `0x0103`) but the store decodes is shown as its
    /// event, never counted as unsupported. Only a type neither knows, without
    /// the skippable bit, is unsupported.
    package static func decode(_ record: JournalRecord) throws(JournalEntry.DecodeError) -> (JournalEntry, StoreEvent?) {
        let entry: JournalEntry
        do {
            entry = try JournalEntry.decode(record)
        } catch {
            guard case .unsupportedType = error, let event = try StoreEvent.decode(record) else { throw error }
            return (.opaque(record.type), event)
        }
        if case .opaque = entry { return (entry, try storeEvent(record)) }
        return (entry, nil)
    }

    /// The store event of a record ``JournalEntry`` leaves opaque: `nil` for
    /// a type the store does not journal (a reserved or skippable one, shown as opaque).
    static func storeEvent(_ record: JournalRecord) throws(JournalEntry.DecodeError) -> StoreEvent? {
        do {
            return try StoreEvent.decode(record)
        } catch {
            if case .unsupportedType = error { return nil }
            throw error
        }
    }

    /// ` in space ID` for a shared space, nothing for the personal one.
    static func inSpace(_ space: SpaceID) -> String { space.isPersonal ? "" : " in space \(space)" }

    /// The columns of an operation: op, kind, record, base, fields, then
    /// ` in space ID` for a shared space (personal ones read as before 2.5).
    static func operationColumns(_ op: JournalOperation) -> String {
        pad(op.kind.description, 7) + pad(op.entity, 10) + pad(op.recordID, 18)
            + pad(op.baseUpdatedAt.map { String($0) } ?? "-", 15) + FieldSummary.text(op.fields) + inSpace(op.space)
    }

    /// The same columns for a server row: `row` or `deleted`, kind, id, its
    /// server stamp, fields, and its shared space as for an operation.
    static func rowColumns(_ row: ServerRow) -> String {
        pad(row.isTombstone ? "deleted" : "row", 7) + pad(row.kind, 10) + pad(row.id, 18) + pad(String(row.updatedAt), 15)
            + (row.isTombstone ? "deleted at \(row.deletedAt!)" : FieldSummary.text(row.fields)) + inSpace(row.space)
    }

    /// The indentation of a record's second and later lines, under the
    /// columns of `offset`, `seq`, (format 2) `horizon` and `type`.
    static func continuation(syncHorizons: Bool) -> String {
        pad("", 9) + "  " + pad("", 6) + "  " + (syncHorizons ? pad("", 9) + "  " : "") + pad("  ·", 10)
    }

    static func quoted(_ text: String) -> String { JSONText.string(text).serialized }

    /// The text table lines of one record (a decoding problem in place of its fields).
    package static func textLines(_ record: JournalRecord, _ entry: JournalEntry?, _ event: StoreEvent?, _ problem: String?) -> String {
        let horizon = record.syncHorizon.map { pad(String($0), 9, right: true) + "  " } ?? ""
        let prefix = pad(String(record.offset), 9, right: true) + "  " + pad(String(record.sequence), 6, right: true) + "  "
            + horizon + pad(record.type.name, 10)
        let indent = continuation(syncHorizons: record.syncHorizon != nil)
        if let problem { return prefix + "!! " + problem + "\n" }
        if let event { return prefix + eventText(event, continuation: indent) }
        switch entry {
        case .operation(let op)?:
            return prefix + operationColumns(op) + "\n"
        case .batch(let ops)?:
            var lines = prefix + "(\(ops.count) operations)\n"
            for op in ops { lines += indent + operationColumns(op) + "\n" }
            return lines
        case .salvaged(let offset, let sequence, let type, let payload)?:
            return prefix + "copied from offset \(offset), seq \(sequence), type \(type.name), \(payload.count) bytes\n"
        case .opaque(.syncHorizon)?:
            return prefix + "(a writer closed here: every record before it is durable)\n"
        case .opaque(let type)?:
            return prefix + "(\(record.payload.count) payload bytes, type \(type) not shown)\n"
        case nil:
            return prefix + "\n"
        }
    }

    /// The text of a store event after the record's prefix: its first line and any further lines.
    static func eventText(_ event: StoreEvent, continuation: String = continuation(syncHorizons: false)) -> String {
        func lines(_ first: String, _ more: [String]) -> String {
            ([first] + more.map { continuation + $0 }).joined(separator: "\n") + "\n"
        }
        switch event {
        case .edit(let op, let steps):
            return lines(operationColumns(op), steps.map { step in
                switch step {
                case .remove(let id): return "compaction: remove \(id)"
                case .replace(let id, let merged): return "compaction: replace \(id) with " + operationColumns(merged)
                }
            })
        case .editBatch(let ops):
            return lines("(\(ops.count) operations)", ops.map(operationColumns))
        case .sent(let ids):
            return lines("(\(ids.count) operation\(ids.count == 1 ? "" : "s") may have reached the server)", ids.map(\.description))
        case .withdrawn(let ids):
            return lines("(\(ids.count) operation\(ids.count == 1 ? "" : "s") never left the device: unsent again)", ids.map(\.description))
        case .acknowledged(let acks):
            return lines("(\(acks.count) acknowledged)", acks.map { rowColumns($0.row) + "  for \($0.operationID)" })
        case .failed(let id, let reason, let permanent):
            return lines("\(id) " + (permanent ? "rejected for good" : "failed, will be retried") + ": " + quoted(reason), [])
        case .conflicted(let id, let server):
            return lines("\(id) conflicts; " + (server == nil ? "the server deleted the record" : "the server's copy wins:"),
                         server.map { [rowColumns($0)] } ?? [])
        case .pulled(let kind, let rows, let cursor, let space):
            return lines("(\(rows.count) \(kind) row\(rows.count == 1 ? "" : "s")\(inSpace(space)), cursor \(cursor.map(\.description) ?? "unchanged"))",
                         rows.map(rowColumns))
        case .spaceDescribed(let space):
            return lines("space \(space.id) \(quoted(space.name)), \(space.role), version \(space.version)",
                         space.members.map { "member \($0.user): \($0.role)" })
        case .spaceLost(let space):
            return lines("membership of space \(space) ended: its rows leave, its queued operations are rejected", [])
        case .attemptFailed(let id, let kind, let reason, let quarantine):
            let outcome = !quarantine ? "stays queued" : kind == .deletedOrNoAccess ? "quarantined; the device forgets its copy of the row" : "quarantined"
            return lines("\(id) failed (\(kind)), \(outcome): " + quoted(reason), [])
        case .released(let id):
            return lines("\(id) released from quarantine by the app: sent again, with a fresh budget", [])
        case .discarded(let id):
            return lines("\(id) discarded by the app: it leaves the queue unsent", [])
        case .conflictDismissed(let id):
            return lines("conflict \(id) dismissed by the app (its resolution stands)", [])
        case .conflictSettled(let id, let op, let steps):
            return lines("conflict \(id) settled by the app with its own edit:", [operationColumns(op)] + steps.map { step in
                switch step {
                case .remove(let id): return "compaction: remove \(id)"
                case .replace(let id, let merged): return "compaction: replace \(id) with " + operationColumns(merged)
                }
            })
        case .conflictResolved(let id, let server, let base, let resolution):
            return lines("\(id) conflicts; " + resolutionText(resolution),
                         ["server: " + (server.map(rowColumns) ?? "deleted the record"), "base:   " + (base.map(rowColumns) ?? "unknown")]
                            + (resolution.replacement.map { ["queued in its place: " + operationColumns($0)] } ?? []))
        case .forgotten(let kind, let ids, let space):
            return lines("(\(ids.count) \(kind) row\(ids.count == 1 ? "" : "s")\(inSpace(space)) the server no longer has)", ids)
        case .transaction(let edits):
            return lines("(\(edits.count) edits, durable and visible together)", edits.flatMap { edit in
                [operationColumns(edit.operation)] + edit.compaction.map { step in
                    switch step {
                    case .remove(let id): return "  compaction: remove \(id)"
                    case .replace(let id, let merged): return "  compaction: replace \(id) with " + operationColumns(merged)
                    }
                }
            })
        case .server(let change):
            switch change {
            case .learned(let identity):
                return lines("server identity \(identity) learned: the device syncs with this server", [])
            case .mismatched(let mismatch):
                return lines("sync stopped: \(mismatch)", [])
            case .adopted(let identity, let seenStamp):
                return lines("reconciled with " + (identity.map { "server \($0)" } ?? "a server without an identity")
                             + ", seen up to " + (seenStamp.map { String($0) } ?? "nothing"), [])
            }
        case .reuploads(let plan):
            return lines("(\(plan.uploads.count) re-upload\(plan.uploads.count == 1 ? "" : "s"), \(plan.rebases.count) rebased)",
                         plan.uploads.map(operationColumns) + plan.rebases.map { "rebase \($0.operationID) on \($0.base)" }
                            + plan.renames.map { "rename \($0.from) to \($0.to) (sent again under the new id)" })
        case .checkpoint(let part):
            switch part {
            case .server(let known):
                return lines("server: " + serverText(known), [])
            case .baseRows(let rows):
                return lines("base rows: \(rows.count)", rows.map(rowColumns))
            case .rows(let rows):
                return lines("rows: \(rows.count)", rows.map(rowColumns))
            case .outbox(let entries):
                return lines("outbox: \(entries.count) operation\(entries.count == 1 ? "" : "s")", entries.map { entry in
                    operationColumns(entry.operation) + "  " + deliveryText(entry)
                })
            case .cursors(let cursors):
                return lines("cursors: " + cursors.keys.sorted(by: utf8Order).map { "\($0) \(cursors[$0]!)" }.joined(separator: ", "), [])
            case .spaceCursors(let space, let cursors):
                return lines("cursors in space \(space): " + cursors.keys.sorted(by: utf8Order).map { "\($0) \(cursors[$0]!)" }.joined(separator: ", "), [])
            case .spaces(let spaces):
                return lines("spaces: \(spaces.count)", spaces.map { "\($0.id) \(quoted($0.name)), \($0.role), version \($0.version), \($0.members.count) member\($0.members.count == 1 ? "" : "s")" })
            case .conflicts(let conflicts):
                return lines("conflicts: \(conflicts.count)", conflicts.flatMap { conflict in
                    [operationColumns(conflict.operation),
                     "  server: " + (conflict.server.map(rowColumns) ?? "deleted the record"),
                     "  base:   " + (conflict.baseRow.map(rowColumns) ?? "unknown"),
                     "  \(conflict.shape) conflict, " + resolutionText(conflict.resolution)]
                })
            case .rejections(let rejections):
                return lines("rejections: \(rejections.count)", rejections.map { rejection in
                    operationColumns(rejection.operation) + "  after \(rejection.attempts) attempt\(rejection.attempts == 1 ? "" : "s"): " + quoted(rejection.reason)
                })
            case .end(let rows, let operations, let conflicts, let rejections):
                return lines("end: \(rows) rows, \(operations) operations, \(conflicts) conflicts, \(rejections) rejections", [])
            }
        }
    }

    /// `identity S1, seen 42` with `, stopped: …` while a mismatch waits for a reconciliation.
    static func serverText(_ known: KnownServer) -> String {
        "identity " + (known.identity?.text ?? "none") + ", seen " + (known.seenStamp.map { String($0) } ?? "nothing")
            + (known.mismatch.map { ", stopped: \($0)" } ?? "")
    }

    /// `sent yes, attempts 1, last error "HTTP 503"`, with the 1.1 state when
    /// there is any: `…, permanent failures 3, quarantined, last failure permanent, last error "HTTP 422"`.
    static func deliveryText(_ entry: OutboxOperation) -> String {
        "sent \(entry.sent ? "yes" : "no"), attempts \(entry.attempts)"
            + (entry.permanentFailures > 0 ? ", permanent failures \(entry.permanentFailures)" : "")
            + (entry.quarantined ? ", quarantined" : "")
            + (entry.lastFailure.map { ", last failure \($0)" } ?? "")
            + (entry.lastError.map { ", last error " + quoted($0) } ?? "")
    }

    /// `merge-fields: requeued as <id>; lost: name, note` or `server-wins: the server's copy stands; lost: text`.
    static func resolutionText(_ resolution: ConflictResolution) -> String {
        let kept = resolution.replacement.map { "requeued as \($0.id)" } ?? "the server's copy stands"
        return "\(resolution.strategy): " + kept + (resolution.lostFields.isEmpty ? "" : "; lost: " + resolution.lostFields.joined(separator: ", "))
    }

    static func utf8Order(_ a: String, _ b: String) -> Bool { Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }

    /// The header line: format version, generation, first sequence, creation time.
    package static func headerText(_ header: JournalHeader) -> String {
        let continues = header.continuesGeneration == 0 ? "-" : hex(header.continuesGeneration)
        return "format \(header.majorVersion).\(header.minorVersion), journal \(header.journalID), generation \(hex(header.generation)), "
            + "continues \(continues), first seq \(header.firstSequence), created \(timestamp(header.createdAtMilliseconds))"
    }

    /// The text summary after the records: status, counts, what a salvage could recover.
    package static func textSummary(_ report: JournalScanReport, malformed: Int, unsupported: Int, recordsAfterDamage: Int) -> String {
        var text = ""
        let byType = report.recordsByType.sorted { $0.key < $1.key }.map { "\($0.key.name) \($0.value)" }.joined(separator: ", ")
        text += "records:  \(report.recordCount)" + (byType.isEmpty ? "" : " (\(byType))") + "\n"
        text += "bytes:    \(report.validBytes) valid of \(report.fileBytes)"
            + (report.preallocatedBytes > 0 ? ", then \(report.preallocatedBytes) preallocated (zero) bytes\n" : "\n")
        text += "status:   \(report.status)\n"
        switch report.status {
        case .clean: break
        case .tornTail(let offset, _):
            text += "note:     opening this journal for writing moves the \(report.fileBytes - offset) bytes from offset \(offset) to a side file and continues at seq \(report.nextSequence)\n"
        case .corrupt:
            text += "note:     a writer refuses this journal and leaves it untouched; `journal-salvage` copies the \(report.recordCount) valid records before the damage"
            text += recordsAfterDamage > 0 ? " (`--keep-after-damage` also keeps the \(recordsAfterDamage) valid records after it, flagged)\n" : "\n"
        case .unsupported:
            text += "note:     a newer version wrote this journal: this one only reads it (up to offset \(report.validBytes)); writers and stores refuse to append, and nothing is cut\n"
        }
        if malformed > 0 { text += "problems: \(malformed) record(s) with malformed payloads\n" }
        if unsupported > 0 { text += "problems: \(unsupported) record(s) of types this version cannot read\n" }
        return text
    }
}

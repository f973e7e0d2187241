import Foundation
import SyncJournalCommandLine
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore

/// The `--state` rendering: what replay rebuilds, as text or one JSON object.
extension JournalDumpCommand {
    /// The outbox of `state` as ``LocalStore/outboxStatus()`` lists it, with
    /// whether each entry was sent (the listing's state says `quarantined`
    /// for a quarantined one, sent or not).
    static func outboxStatus(_ state: StoreState) -> [OutboxStatusEntry] {
        state.outbox.operations.map { OutboxStatusEntry(status: OutboxEntryStatus($0, inFlight: false), sent: $0.sent) }
    }

    /// One entry of the listing, and whether it was sent.
    @dynamicMemberLookup
    struct OutboxStatusEntry {
        var status: OutboxEntryStatus
        var sent: Bool
        subscript<T>(dynamicMember path: KeyPath<OutboxEntryStatus, T>) -> T { status[keyPath: path] }
    }

    /// What the text note under the outbox says of the states a journal cannot show.
    static let outboxNote = "in-flight and the next attempt time exist only in a running engine's memory (SyncEngine.outboxStatus()); "
        + "from the journal an operation is queued, sent (it may have reached the server, so it is resent, never cancelled) or quarantined"

    /// A record as the app sees it (what ``LocalStore/records(_:in:)`` returns).
    struct VisibleRecord {
        var key: RecordKey
        var fields: [String: FieldValue]
        var serverUpdatedAt: Int64?
        var pending: Bool
    }

    /// The visible records of `state`, ordered by kind and id, as the store orders them.
    static func visibleRecords(_ state: StoreState) -> [VisibleRecord] {
        var keys = Set(state.snapshot.keys)
        keys.formUnion(state.outbox.keys)
        return keys.sorted(by: <).compactMap { key in
            guard let fields = state.visibleFields(of: key) else { return nil }
            return VisibleRecord(key: key, fields: fields, serverUpdatedAt: state.snapshot[key]?.updatedAt,
                                 pending: !state.outbox.operations(on: key).isEmpty)
        }
    }

    /// The `--state` text: what replay rebuilds, or why it cannot.
    package static func textState(_ result: Result<StoreState, Replayer.Failure>, records: Int) -> String {
        let state: StoreState
        switch result {
        case .failure(let failure): return "state:    cannot be rebuilt: \(failure)\n"
        case .success(let value): state = value
        }
        var text = "state:    as replay rebuilds it from \(records) record\(records == 1 ? "" : "s")\n"
        let visible = visibleRecords(state)
        if visible.isEmpty {
            text += "records:  none\n"
        } else {
            var perKind: [String: Int] = [:]
            for record in visible { perKind[record.key.kind, default: 0] += 1 }
            text += "records:  " + perKind.keys.sorted().map { "\($0) \(perKind[$0]!)" }.joined(separator: ", ") + "\n"
            text += "  " + pad("kind", 10) + pad("record", 18) + pad("server", 15) + pad("pending", 9) + "fields\n"
            for record in visible {
                text += "  " + pad(record.key.kind, 10) + pad(record.key.id, 18) + pad(record.serverUpdatedAt.map { String($0) } ?? "-", 15)
                    + pad(record.pending ? "yes" : "no", 9) + FieldSummary.text(record.fields) + inSpace(record.key.space) + "\n"
            }
        }
        let outbox = outboxStatus(state)
        if outbox.isEmpty {
            text += "outbox:   empty\n"
        } else {
            let quarantined = outbox.filter { $0.state == .quarantined }.count
            text += "outbox:   \(outbox.count) operation\(outbox.count == 1 ? "" : "s"), in the order they are sent"
                + (quarantined == 0 ? "" : "; \(quarantined) quarantined: not sent until the app retries or discards "
                    + (quarantined == 1 ? "it" : "them") + ", later operations on the same record wait behind") + "\n"
            text += "  " + pad("opId", 38) + pad("op", 7) + pad("kind", 10) + pad("record", 18) + pad("base", 15) + pad("state", 13)
                + pad("attempts", 10) + pad("permanent", 11) + pad("last failure", 22) + "last error\n"
            for entry in outbox {
                let op = entry.operation
                text += "  " + pad(op.id.description, 38) + pad(op.kind.description, 7) + pad(op.entity, 10) + pad(op.recordID, 18)
                    + pad(op.baseUpdatedAt.map { String($0) } ?? "-", 15) + pad(entry.state.description, 13)
                    + pad(String(entry.attempts), 10) + pad(String(entry.permanentFailures), 11)
                    + pad(entry.lastFailure?.description ?? "-", 22) + (entry.lastError.map(quoted) ?? "-") + inSpace(op.space) + "\n"
            }
            text += "note:     \(outboxNote)\n"
        }
        if state.cursors.isEmpty {
            text += "cursors:  none\n"
        } else {
            text += "cursors:\n"
            for kind in state.cursors.keys.sorted(by: utf8Order) { text += "  " + pad(kind, 10) + state.cursors[kind]!.description + "\n" }
        }
        // Shared spaces only once the device met one, so older journals' states read as they always did.
        for space in state.spaceCursors.keys.sorted(by: <) {
            let cursors = state.spaceCursors[space] ?? [:]
            text += "cursors in space \(space):\n"
            for kind in cursors.keys.sorted(by: utf8Order) { text += "  " + pad(kind, 10) + cursors[kind]!.description + "\n" }
        }
        if !state.spaces.isEmpty {
            text += "spaces:   \(state.spaces.count), as the server last described them\n"
            for space in state.spaces.values.sorted(by: { $0.id < $1.id }) {
                text += "  \(space.id) \(quoted(space.name)), \(space.role), version \(space.version), members: "
                    + space.members.map { "\($0.user) \($0.role)" }.joined(separator: ", ") + "\n"
            }
        }
        if state.server.needsCheckpointPart { text += "server:   " + serverText(state.server) + "\n" }
        let baseRows = state.baseRows.values.sorted { $0.key < $1.key }
        if baseRows.isEmpty {
            text += "base rows: none\n"
        } else {
            text += "base rows: \(baseRows.count), the older server copies queued edits were made on (a conflict's merge base)\n"
            for row in baseRows { text += "  " + pad("", 38) + rowColumns(row) + "\n" }
        }
        if state.conflicts.isEmpty {
            text += "conflicts: none\n"
        } else {
            text += "conflicts: \(state.conflicts.count), each resolved by its kind's policy and kept until the app dismisses it\n"
            for conflict in state.conflicts {
                text += "  " + pad(conflict.operation.id.description, 38) + operationColumns(conflict.operation) + "\n"
                text += "  " + pad("", 38) + "server: " + (conflict.server.map(rowColumns) ?? "deleted the record") + "\n"
                text += "  " + pad("", 38) + "base:   " + (conflict.baseRow.map(rowColumns) ?? "unknown") + "\n"
                text += "  " + pad("", 38) + "\(conflict.shape) conflict, " + resolutionText(conflict.resolution) + "\n"
                if let replacement = conflict.resolution.replacement {
                    text += "  " + pad("", 38) + "queued in its place: " + operationColumns(replacement) + "\n"
                }
            }
        }
        if state.rejections.isEmpty {
            text += "rejections: none\n"
        } else {
            text += "rejections: \(state.rejections.count)\n"
            for rejection in state.rejections {
                text += "  " + pad(rejection.operation.id.description, 38) + operationColumns(rejection.operation) + "\n"
                text += "  " + pad("", 38) + "after \(rejection.attempts) attempt\(rejection.attempts == 1 ? "" : "s"): " + quoted(rejection.reason) + "\n"
            }
        }
        return text
    }

    /// `{"state": {"records": …, "outbox": […], "cursors": …, "baseRows": […], "conflicts": […], "rejections": […]}}`
    /// (with `spaceCursors` and `spaces` once the device met a shared space, and a record's `space` when shared), or
    /// `{"state": null, "stateError": "…"}` when replay cannot rebuild one. Each outbox entry is
    /// listed as the app lists it (``statusJSON(_:)``); each conflict with its shape and resolution.
    package static func jsonState(_ result: Result<StoreState, Replayer.Failure>) -> JSONText {
        let state: StoreState
        switch result {
        case .failure(let failure): return .object([("state", .null), ("stateError", .string(failure.description))])
        case .success(let value): state = value
        }
        var kinds: [(String, [JSONText])] = []
        for record in visibleRecords(state) {
            let json = JSONText.object([("recordId", .string(record.key.id))] + spaceJSON(record.key.space) + [
                ("serverUpdatedAt", record.serverUpdatedAt.map { .int($0) } ?? .null),
                ("pending", .bool(record.pending)),
                ("fields", FieldSummary.json(record.fields)),
            ])
            if kinds.last?.0 == record.key.kind { kinds[kinds.count - 1].1.append(json) } else { kinds.append((record.key.kind, [json])) }
        }
        var members: [(String, JSONText)] = [
            ("records", .object(kinds.map { ($0.0, .array($0.1)) })),
            ("outbox", .array(outboxStatus(state).map(statusJSON))),
            ("cursors", cursorsJSON(state.cursors)),
            ("baseRows", .array(state.baseRows.values.sorted { $0.key < $1.key }.map(rowJSON))),
            ("conflicts", .array(state.conflicts.map(conflictJSON))),
            ("rejections", .array(state.rejections.map(rejectionJSON))),
        ]
        // Only once the device met a shared space, so older journals' states read as they always did.
        if !state.spaceCursors.isEmpty {
            members.append(("spaceCursors", .object(state.spaceCursors.keys.sorted(by: <).map { ($0.description, cursorsJSON(state.spaceCursors[$0] ?? [:])) })))
        }
        if !state.spaces.isEmpty { members.append(("spaces", .array(state.spaces.values.sorted { $0.id < $1.id }.map(describedSpaceJSON)))) }
        // Only once the device knows a server identity, so older journals' states read as they always did.
        if state.server.needsCheckpointPart { members.append(("server", serverJSON(state.server))) }
        return .object([("state", .object(members))])
    }
}

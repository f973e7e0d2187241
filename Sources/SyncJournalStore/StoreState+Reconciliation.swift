import SyncJournalProtocol

extension StoreState {
    /// What a reconciliation must queue so that the server, whose every row
    /// of `kinds` is `serverRows` (tombstones included), gets each record
    /// the device holds, and (`sameHistory`) loses again the records the
    /// device saw deleted. Per record of those kinds:
    ///
    /// - no queued edit: the device's copy is re-created when the server has
    ///   no row for it, and sent as an update on the server's copy when the
    ///   server's copy is older (`sameHistory`: the same server, restored;
    ///   stamps compare) or differs (another database: stamps of two
    ///   databases do not compare, and the device keeps what it has). A
    ///   server tombstone stands (the device learns of the deletion as from
    ///   any pull), unless it is older than the device's copy on the same
    ///   server: the record was made again after that deletion.
    /// - queued edits starting with a create: nothing; the create carries the record.
    /// - queued updates or deletes: nothing when they already apply on the
    ///   server's copy (same stamp), when the server deleted the record (as above), or
    ///   (`sameHistory`) when the server's copy is newer: they meet it as a
    ///   conflict, as any concurrent edit does. Otherwise the copy they were
    ///   made on is re-uploaded ahead of them (they take its new stamp when
    ///   it is acknowledged), or, when the server's copy of another
    ///   database has the same fields, they are rebased on it.
    ///
    /// - `sameHistory` only: a live server row the device holds nothing of,
    ///   at or before the kind's pull cursor, is one the device pulled and
    ///   then saw deleted (its own acknowledged delete, or another device's
    ///   pulled): the restore undid that deletion, so a delete is queued
    ///   again. With another database nothing tells, and such a record
    ///   reappears on the device.
    ///
    /// Queued operations already sent, on a record whose first queued edit
    /// is an update or delete that does not apply on the server's copy as
    /// it is, get new ids: the server's database may remember the old ids
    /// with a result from before it changed, which no longer describes the
    /// record (a tombstone or a newer copy met as a conflict included).
    ///
    /// Running it again after the plan was journaled finds nothing to do
    /// for the same records, so an interrupted reconciliation reruns safely.
    package func reuploadPlan(serverRows: [RecordKey: ServerRow], kinds: Set<String>, sameHistory: Bool,
                              queuedAt: Int64, makeID: () -> OperationID) -> ReuploadPlan {
        var keys = Set(snapshot.keys.filter { kinds.contains($0.kind) })
        for key in outbox.keys where kinds.contains(key.kind) { keys.insert(key) }
        var plan = ReuploadPlan()
        for key in keys.sorted(by: { $0 < $1 }) {
            let server = serverRows[key]
            let live = server.flatMap { $0.isTombstone ? nil : $0 }
            let queued = outbox.operations(on: key)
            let copy: ServerRow
            if let first = queued.first {
                guard first.operation.kind != .create, let base = first.operation.baseUpdatedAt else { continue }
                if server?.updatedAt == base { continue }
                // Sent edits that meet the server's copy as they are, or go
                // after a re-upload or on a new base, get new ids: the
                // server's database may remember an old id with the row from
                // before it changed, and answering the resend with it would
                // show that old row again.
                func renameSent() {
                    for entry in queued where entry.sent {
                        plan.renames.append(ReuploadPlan.Rename(from: entry.id, to: makeID()))
                    }
                }
                // A tombstone stands, unless (the same server) it is older than the
                // copy the edits were made on: the record was made again after it.
                if let server, server.isTombstone, !(sameHistory && server.updatedAt < base) {
                    renameSent()
                    continue
                }
                if sameHistory, let live, live.updatedAt > base {
                    renameSent()
                    continue
                }
                guard let known = baseRow(for: first) ?? snapshot[key] else { continue }
                renameSent()
                if !sameHistory, let live, live.fields == known.fields {
                    for entry in queued where entry.operation.kind != .create {
                        plan.rebases.append(ReuploadPlan.Rebase(operationID: entry.id, base: live.updatedAt))
                    }
                    continue
                }
                copy = known
            } else {
                guard let known = snapshot[key] else { continue }
                if let server, server.isTombstone, !(sameHistory && server.updatedAt < known.updatedAt) { continue }
                if let live {
                    if live.fields == known.fields { continue }
                    if sameHistory && live.updatedAt >= known.updatedAt { continue }
                }
                copy = known
            }
            plan.uploads.append(JournalOperation(id: makeID(), kind: live == nil ? OperationKind.create : .update, entity: key.kind,
                                                 recordID: key.id, fields: copy.fields, baseUpdatedAt: live?.updatedAt,
                                                 queuedAt: queuedAt, modelVersion: copy.modelVersion, space: key.space))
        }
        guard sameHistory else { return plan }
        for (key, row) in serverRows.sorted(by: { $0.key < $1.key }) where kinds.contains(key.kind) && !row.isTombstone {
            // The cursor of the record's own space: a row at or before it
            // was seen here, so its absence is a deletion the server lost.
            let seen = key.space.isPersonal ? cursors[key.kind] : spaceCursors[key.space]?[key.kind]
            guard snapshot[key] == nil, outbox.operations(on: key).isEmpty, let cursor = seen,
                  !(cursor < PullCursor(updatedAt: row.updatedAt, id: row.id)) else { continue }
            plan.uploads.append(JournalOperation(id: makeID(), kind: .delete, entity: key.kind, recordID: key.id,
                                                 baseUpdatedAt: row.updatedAt, queuedAt: queuedAt, modelVersion: row.modelVersion,
                                                 space: key.space))
        }
        return plan
    }
}


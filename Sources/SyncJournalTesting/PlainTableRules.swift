import SyncJournalProtocol

/// How a server that does not remember operation ids answers: a table
/// behind PostgREST, with an insert that ignores duplicates and an update or
/// delete filtered by id, stamp and owner (row-level security) that reports
/// only whether it matched. ``ReferenceServer`` plays it when
/// ``ReferenceServer/remembersOperationIDs`` is off; `sync-server` always
/// remembers, and applies `StorageRules` instead.
enum PlainTableRules {
    /// Applies one well-formed mutation of `user` (the caller refuses
    /// malformed ones first, as `StorageRules.refusal(of:)` says).
    ///
    /// - A create of an id that exists (a live row of any user, or another
    ///   user's tombstone) is ``MutationOutcome/duplicate``.
    /// - An update or delete whose row is missing, deleted or another
    ///   user's, or whose base is not the stored stamp, is
    ///   ``MutationOutcome/noMatch`` (never a conflict).
    static func apply<Queries: StorageQueries>(_ mutation: Mutation, user: String,
                                               _ queries: Queries) throws(Queries.Failure) -> MutationOutcome {
        let existing = try queries.row(kind: mutation.kind, id: mutation.recordID)
        let previous = existing?.row.updatedAt
        // The highest model version that wrote the record, as `StorageRules` keeps it.
        let modelVersion = StorageRules.highestModelVersion(existing?.row.modelVersion, mutation.modelVersion)
        switch mutation.op {
        case .create:
            if let existing, !existing.row.isTombstone || existing.owner != user { return .duplicate }
            let row = ServerRow(kind: mutation.kind, id: mutation.recordID, fields: mutation.fields,
                                updatedAt: try queries.nextStamp(after: previous), modelVersion: modelVersion)
            try queries.write(row, owner: user, createdBy: mutation.operationID.description)
            return .applied(row)
        case .update, .delete:
            guard let existing, existing.owner == user, !existing.row.isTombstone,
                  mutation.baseUpdatedAt == existing.row.updatedAt else { return .noMatch }
            let stamp = try queries.nextStamp(after: previous)
            var row = existing.row
            if mutation.op == .update {
                row.fields.merge(mutation.fields) { _, new in new }
                row.updatedAt = stamp
            } else {
                row = ServerRow(kind: row.kind, id: row.id, updatedAt: stamp, deletedAt: stamp)
            }
            row.modelVersion = modelVersion
            try queries.write(row, owner: user, createdBy: existing.createdBy)
            return .applied(row)
        }
    }
}

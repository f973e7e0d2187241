import SyncJournalProtocol

/// How a server that does not remember operation ids answers: a table
/// behind PostgREST, with an insert that ignores duplicates and an update or
/// delete filtered by id, stamp and owner (row-level security) that reports
/// only whether it matched. ``ReferenceServer`` plays it when
/// ``ReferenceServer/remembersOperationIDs`` is off; `sync-server` always
/// remembers, and applies `StorageRules` instead.
///
/// Such a table keys personal records by kind and id alone, as servers did
/// before spaces: another user's record under the same id is in the way.
/// A shared space is authorized as `StorageRules` does.
enum PlainTableRules {
    /// Applies one well-formed mutation of `user` (the caller refuses
    /// malformed ones first, as `StorageRules.refusal(of:)` says).
    ///
    /// - A create of an id that exists (a live row of any user, or another
    ///   user's tombstone) is ``MutationOutcome/duplicate``.
    /// - An update or delete whose row is missing, deleted or another
    ///   user's, or whose base is not the stored stamp, is
    ///   ``MutationOutcome/noMatch`` (never a conflict).
    static func apply(_ mutation: Mutation, user: String, _ storage: InMemoryStorage) throws(TransportError) -> MutationOutcome {
        if let refusal = try StorageRules.spaceRefusal(of: mutation, user: user, storage) { return refusal }
        let key = mutation.key
        let owner = StorageRules.owner(in: key.space, user: user)
        let existing = storage.row(key, owner: owner)
        let taken = key.space.isPersonal && storage.personalOwners(kind: key.kind, id: key.id).contains { $0 != user }
        let previous = existing?.row.updatedAt
        // The highest model version that wrote the record, as `StorageRules` keeps it.
        let modelVersion = StorageRules.highestModelVersion(existing?.row.modelVersion, mutation.modelVersion)
        switch mutation.op {
        case .create:
            if taken { return .duplicate }
            if let existing, !existing.row.isTombstone { return .duplicate }
            let row = ServerRow(kind: key.kind, id: key.id, fields: mutation.fields,
                                updatedAt: storage.nextStamp(after: previous, in: key.space), modelVersion: modelVersion, space: key.space)
            storage.write(row, owner: owner, createdBy: mutation.operationID.description)
            return .applied(row)
        case .update, .delete:
            guard let existing, !existing.row.isTombstone, mutation.baseUpdatedAt == existing.row.updatedAt else { return .noMatch }
            let stamp = storage.nextStamp(after: previous, in: key.space)
            var row = existing.row
            if mutation.op == .update {
                row.fields.merge(mutation.fields) { _, new in new }
                row.updatedAt = stamp
            } else {
                row = ServerRow(kind: row.kind, id: row.id, updatedAt: stamp, deletedAt: stamp, space: key.space)
            }
            row.modelVersion = modelVersion
            storage.write(row, owner: owner, createdBy: existing.createdBy)
            return .applied(row)
        }
    }
}

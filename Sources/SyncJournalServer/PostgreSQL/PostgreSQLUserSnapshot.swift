import SyncJournalProtocol

/// One user's view of a pull's `repeatable read` snapshot, as the shared
/// pull rules (``StorageRules/page(user:_:_:)``) read it: rows through the
/// transaction, horizons of this user (tombstone horizons are kept per user,
/// because stamps are ordered per user).
struct PostgreSQLUserSnapshot: StorageQueries {
    typealias Failure = StorageError

    /// The open read-only transaction.
    let transaction: PostgreSQLTransaction
    /// The user pulling.
    let owner: String

    func row(kind: String, id: String) throws(StorageError) -> OwnedRow? { try transaction.row(kind: kind, id: id) }

    /// A pull writes nothing: its transaction is read only.
    func write(_ row: ServerRow, owner: String, createdBy: String?) throws(StorageError) {
        throw .badRequest("a pull does not write rows")
    }

    func rows(owner: String, kind: String, after cursor: PullCursor?, limit: Int) throws(StorageError) -> [ServerRow] {
        try transaction.rows(owner: owner, kind: kind, after: cursor, limit: limit)
    }

    /// A pull takes no stamps: its transaction is read only.
    func nextStamp(after previous: Int64?) throws(StorageError) -> Int64 {
        throw .badRequest("a pull does not take stamps")
    }

    /// The position of the last of this user's tombstones of `kind` purged.
    func horizon(kind: String) throws(StorageError) -> PullCursor? { try transaction.horizon(owner: owner, kind: kind) }

    static func failure(_ refusal: PullRefusal) -> StorageError { StorageError(refusal) }
}

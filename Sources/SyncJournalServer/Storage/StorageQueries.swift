import SyncJournalStore

/// The statements a storage runs inside one transaction. ``StorageRules``
/// decides with them, so SQLite and PostgreSQL apply one set of rules (the
/// reference server's) and differ only in how they store and lock.
protocol StorageQueries {
    /// The row stored under `(kind, id)`, live or a tombstone, with its owner.
    func row(kind: String, id: String) throws(StorageError) -> StorageTransaction.Stored?
    /// Inserts or replaces a row.
    func write(_ row: ServerRow, owner: String) throws(StorageError)
    /// Up to `limit` of `owner`'s rows of `kind` after `cursor`, in `(updatedAt, id)` order.
    func rows(owner: String, kind: String, after cursor: PullCursor?, limit: Int) throws(StorageError) -> [ServerRow]
    /// The next stamp: larger than every stamp issued before it.
    func nextStamp() throws(StorageError) -> Int64
    /// The position of the last tombstone of `kind` purged, if any.
    func horizon(kind: String) throws(StorageError) -> PullCursor?
}

extension StorageTransaction: StorageQueries {}
extension PostgreSQLTransaction: StorageQueries {}

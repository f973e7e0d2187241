/// The statements a storage runs inside one transaction. ``StorageRules``
/// decides with them, so every server (SQLite, PostgreSQL, the in-memory
/// reference server) applies one set of rules and differs only in how it
/// stores and locks.
package protocol StorageQueries {
    /// How this storage's statements fail.
    associatedtype Failure: Error

    /// The row stored under `(kind, id)`, live or a tombstone, with its
    /// owner and the create it comes from.
    func row(kind: String, id: String) throws(Failure) -> OwnedRow?
    /// Inserts or replaces a row; `createdBy` is the id of the create
    /// whose record it is (``OwnedRow/createdBy``).
    func write(_ row: ServerRow, owner: String, createdBy: String?) throws(Failure)
    /// Up to `limit` of `owner`'s rows of `kind` after `cursor`, in `(updatedAt, id)` order.
    func rows(owner: String, kind: String, after cursor: PullCursor?, limit: Int) throws(Failure) -> [ServerRow]
    /// The stamp for the next version of a row whose stored version has
    /// stamp `previous` (`nil`: no stored version): larger than `previous`,
    /// and larger than any stamp a pull may already have handed out, so the
    /// new version never sorts behind a cursor a client holds.
    func nextStamp(after previous: Int64?) throws(Failure) -> Int64
    /// The position of the last tombstone of `kind` purged, if any.
    func horizon(kind: String) throws(Failure) -> PullCursor?
    /// How this storage reports a pull the rules refuse.
    static func failure(_ refusal: PullRefusal) -> Failure
}

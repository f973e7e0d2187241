/// The statements a storage runs inside one transaction. ``StorageRules``
/// decides with them, so every server (SQLite, PostgreSQL, the in-memory
/// reference server) applies one set of rules and differs only in how it
/// stores and locks.
///
/// Rows are addressed by space, owner, kind and id: in the personal space
/// `owner` is the user whose space it is (two users may each hold the same
/// kind and id); in a shared space `owner` is empty, as the space's
/// records are its members' alike (``StorageRules/owner(in:user:)``).
package protocol StorageQueries {
    /// How this storage's statements fail.
    associatedtype Failure: Error

    /// Whether `user` may read `content` (``AttachmentRules/readableSize(of:user:_:)``),
    /// as the push's transaction sees it: the push rule refuses a create or
    /// update that refers to a content the caller may not read.
    func mayRead(_ content: ContentHash, user: String) throws(Failure) -> Bool

    /// The row stored under `key` for `owner`, live or a tombstone, with
    /// the create it comes from.
    func row(_ key: RecordKey, owner: String) throws(Failure) -> OwnedRow?
    /// Inserts or replaces a row (in ``ServerRow/space``); `createdBy` is
    /// the id of the create whose record it is (``OwnedRow/createdBy``).
    func write(_ row: ServerRow, owner: String, createdBy: String?) throws(Failure)
    /// Up to `limit` rows of `kind` in `space` held by `owner` after
    /// `cursor`, in `(updatedAt, id)` order, each carrying its space.
    func rows(in space: SpaceID, owner: String, kind: String, after cursor: PullCursor?, limit: Int) throws(Failure) -> [ServerRow]
    /// The stamp for the next version of a row of `space` whose stored
    /// version has stamp `previous` (`nil`: no stored version), or for a
    /// change of a shared space's description: larger than `previous`, than
    /// any stamp of the space before it, and than any stamp a pull may
    /// already have handed out, so the new version never sorts behind a
    /// cursor a client holds. In a shared space no two writes get one stamp,
    /// so a cursor at the space's last stamp has seen everything in it.
    func nextStamp(after previous: Int64?, in space: SpaceID) throws(Failure) -> Int64
    /// The position of the last tombstone of `kind` purged in `space` (the
    /// personal space: as the storage keeps it for the user it reads for), if any.
    func horizon(kind: String, in space: SpaceID) throws(Failure) -> PullCursor?
    /// `user`'s role in shared space `space`, `nil` when not a member (or no
    /// such space), read in the same transaction as the rows.
    func role(of user: String, in space: SpaceID) throws(Failure) -> SpaceRole?
    /// Every shared space `user` is a member of, ordered by id, with each
    /// one's last stamp: one indexed read.
    func memberships(of user: String) throws(Failure) -> [SpaceStanding]
    /// The members of `space`, in any order.
    func members(of space: SpaceID) throws(Failure) -> [SpaceMember]
    /// How this storage reports a pull the rules refuse.
    static func failure(_ refusal: PullRefusal) -> Failure
}

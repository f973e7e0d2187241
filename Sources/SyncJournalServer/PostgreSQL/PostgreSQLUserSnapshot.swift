import SyncJournalProtocol

/// One user's view of a `repeatable read` transaction, for the pull and
/// read rules: rows and memberships come from the transaction; horizons
/// are the user's own in the personal space (``PostgreSQLTransaction/horizon(owner:kind:)``)
/// and the space's in a shared one.
struct PostgreSQLUserSnapshot: StorageQueries {
    typealias Failure = StorageError

    let transaction: PostgreSQLTransaction
    let owner: String

    func row(_ key: RecordKey, owner: String) throws(StorageError) -> OwnedRow? { try transaction.row(key, owner: owner) }

    func write(_ row: ServerRow, owner: String, createdBy: String?) throws(StorageError) {
        throw .badRequest("a pull does not write rows")
    }

    func rows(in space: SpaceID, owner: String, kind: String, after cursor: PullCursor?, limit: Int) throws(StorageError) -> [ServerRow] {
        try transaction.rows(in: space, owner: owner, kind: kind, after: cursor, limit: limit)
    }

    func nextStamp(after previous: Int64?, in space: SpaceID) throws(StorageError) -> Int64 {
        throw .badRequest("a pull does not take stamps")
    }

    func horizon(kind: String, in space: SpaceID) throws(StorageError) -> PullCursor? {
        space.isPersonal ? try transaction.horizon(owner: owner, kind: kind) : try transaction.spaceHorizon(space, kind: kind)
    }

    func role(of user: String, in space: SpaceID) throws(StorageError) -> SpaceRole? { try transaction.role(of: user, in: space) }

    func memberships(of user: String) throws(StorageError) -> [SpaceStanding] { try transaction.memberships(of: user) }

    func members(of space: SpaceID) throws(StorageError) -> [SpaceMember] { try transaction.members(of: space) }

    func mayRead(_ content: ContentHash, user: String) throws(StorageError) -> Bool {
        try AttachmentRules.readableSize(of: content, user: user, transaction) != nil
    }

    static func failure(_ refusal: PullRefusal) -> StorageError { StorageError(refusal) }
}

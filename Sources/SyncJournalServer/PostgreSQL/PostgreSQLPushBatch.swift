import SyncJournalProtocol

/// A push's rows in memory, for ``StorageRules``: the stored rows its
/// mutations name, read once under the stamp locks (the user's, and those
/// of the shared spaces it writes into), and what the rules write, sent
/// back in one statement at the end. Stamps come from the locked counters.
final class PostgreSQLPushBatch: StorageQueries {
    typealias Failure = StorageError

    private var stored: [RowAddress: OwnedRow]
    /// The rows written, in the order first written, each with its owner column.
    private(set) var written: [(row: ServerRow, owner: String, createdBy: String?)] = []
    private var writtenIndex: [RowAddress: Int] = [:]
    /// The user's personal counter.
    private(set) var lastStamp: Int64
    /// Whether a personal stamp was taken.
    private(set) var tookStamp = false
    /// Per locked shared space, its counter and the user's role.
    private var spaces: [SpaceID: (last: Int64, role: SpaceRole?)]
    /// The shared spaces' counters that moved.
    private(set) var spaceStamps: [SpaceID: Int64] = [:]
    private let clock: () -> Int64
    /// The contents the push's mutations refer to that the user may read,
    /// read once under the push's locks (a push's own writes make no
    /// content readable that was not: a row may refer only to one already readable).
    var readableContents: Set<ContentHash> = []

    init(stored: [RowAddress: OwnedRow], lastStamp: Int64, spaces: [SpaceID: (last: Int64, role: SpaceRole?)] = [:],
         clock: @escaping () -> Int64) {
        self.stored = stored
        self.lastStamp = lastStamp
        self.spaces = spaces
        self.clock = clock
    }

    func row(_ key: RecordKey, owner: String) -> OwnedRow? { stored[RowAddress(key: key, owner: owner)] }

    func write(_ row: ServerRow, owner: String, createdBy: String?) {
        let address = RowAddress(key: row.key, owner: owner)
        stored[address] = OwnedRow(row: row, owner: owner, createdBy: createdBy)
        if let index = writtenIndex[address] {
            written[index] = (row, owner, createdBy)
        } else {
            writtenIndex[address] = written.count
            written.append((row, owner, createdBy))
        }
    }

    /// The rows this push knows of (a push never pulls).
    func rows(in space: SpaceID, owner: String, kind: String, after cursor: PullCursor?, limit: Int) -> [ServerRow] {
        let known = stored.values.filter { $0.owner == owner && $0.row.kind == kind && $0.row.space == space }.map(\.row)
        let after = known.filter { row in cursor.map { $0 < PullCursor(updatedAt: row.updatedAt, id: row.id) } ?? true }
        let ordered = after.sorted { PullCursor(updatedAt: $0.updatedAt, id: $0.id) < PullCursor(updatedAt: $1.updatedAt, id: $1.id) }
        return Array(ordered.prefix(limit))
    }

    func nextStamp(after previous: Int64?, in space: SpaceID) throws(StorageError) -> Int64 {
        guard !space.isPersonal else {
            let stamp = max(lastStamp + 1, (previous ?? 0) + 1, clock())
            lastStamp = stamp
            tookStamp = true
            return stamp
        }
        // The rules write only into spaces the user may write, each locked when the push began.
        guard let last = spaces[space]?.last else { throw .badRequest("space \(space) was not locked for this push") }
        let stamp = max(last + 1, (previous ?? 0) + 1, clock())
        spaces[space]?.last = stamp
        spaceStamps[space] = stamp
        return stamp
    }

    func horizon(kind: String, in space: SpaceID) -> PullCursor? { nil }

    func mayRead(_ content: ContentHash, user: String) -> Bool { readableContents.contains(content) }

    func role(of user: String, in space: SpaceID) -> SpaceRole? { spaces[space]?.role ?? nil }

    func memberships(of user: String) throws(StorageError) -> [SpaceStanding] {
        throw .badRequest("a push does not read memberships")
    }

    func members(of space: SpaceID) throws(StorageError) -> [SpaceMember] {
        throw .badRequest("a push does not read members")
    }

    static func failure(_ refusal: PullRefusal) -> StorageError { StorageError(refusal) }
}

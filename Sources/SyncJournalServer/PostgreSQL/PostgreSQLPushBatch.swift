import SyncJournalProtocol

/// One push of one user worked out in memory, between the statement that
/// reads every row and remembered operation the push names and the one
/// that writes what it changed (``PostgreSQLStorage/push(user:_:)``).
///
/// It answers the shared push rules (``StorageRules``) from the rows read up
/// front and from the rows this push wrote so far, so two mutations of one
/// record in one push apply in order, the second seeing the first. Stamps
/// come from the user's locked counter: each is above the counter, above the
/// row's stored stamp, and at least the clock.
final class PostgreSQLPushBatch: StorageQueries {
    typealias Failure = StorageError

    /// The stored rows the push names (any owner), then the versions it wrote.
    private var stored: [RecordKey: OwnedRow]
    /// The final version of every row the push changed, with the create it
    /// comes from, in first-written order.
    private(set) var written: [(row: ServerRow, createdBy: String?)] = []
    private var writtenIndex: [RecordKey: Int] = [:]
    /// The user's last stamp, as the push moves it.
    private(set) var lastStamp: Int64
    /// Whether the push took any stamp (and so must store ``lastStamp``).
    private(set) var tookStamp = false
    private let clock: () -> Int64

    /// A batch over `stored`, stamping above `lastStamp` and at least `clock()`.
    init(stored: [RecordKey: OwnedRow], lastStamp: Int64, clock: @escaping () -> Int64) {
        self.stored = stored
        self.lastStamp = lastStamp
        self.clock = clock
    }

    func row(kind: String, id: String) -> OwnedRow? { stored[RecordKey(kind: kind, id: id)] }

    func write(_ row: ServerRow, owner: String, createdBy: String?) {
        let key = RecordKey(kind: row.kind, id: row.id)
        stored[key] = OwnedRow(row: row, owner: owner, createdBy: createdBy)
        if let index = writtenIndex[key] {
            written[index] = (row, createdBy)
        } else {
            writtenIndex[key] = written.count
            written.append((row, createdBy))
        }
    }

    /// `owner`'s rows of `kind` this batch knows of, after `cursor` (the push rules never page).
    func rows(owner: String, kind: String, after cursor: PullCursor?, limit: Int) -> [ServerRow] {
        let known = stored.values.filter { $0.owner == owner && $0.row.kind == kind }.map(\.row)
        let after = known.filter { row in cursor.map { $0 < PullCursor(updatedAt: row.updatedAt, id: row.id) } ?? true }
        let ordered = after.sorted { PullCursor(updatedAt: $0.updatedAt, id: $0.id) < PullCursor(updatedAt: $1.updatedAt, id: $1.id) }
        return Array(ordered.prefix(limit))
    }

    func nextStamp(after previous: Int64?) -> Int64 {
        let stamp = max(lastStamp + 1, (previous ?? 0) + 1, clock())
        lastStamp = stamp
        tookStamp = true
        return stamp
    }

    /// A push reads no horizon.
    func horizon(kind: String) -> PullCursor? { nil }

    static func failure(_ refusal: PullRefusal) -> StorageError { StorageError(refusal) }
}

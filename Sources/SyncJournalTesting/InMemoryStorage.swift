import SyncJournalProtocol

/// ``ReferenceServer``'s tables in memory: rows with their owners, the stamp
/// clock and the tombstone horizons. The shared push and pull rules
/// (`StorageRules`) query it as `sync-server`'s rules query SQLite, so the
/// reference server and `sync-server` decide alike.
///
/// Its failures are transport errors: a refused pull reaches the client as
/// the in-process transport reports it. Its own statements never fail.
final class InMemoryStorage: StorageQueries {
    /// How a refused pull reaches the client (see ``failure(_:)``).
    typealias Failure = TransportError

    /// Every stored row, live or a tombstone, with its owner.
    private var table: [RecordKey: OwnedRow] = [:]
    /// Where the last row read lies in `table`: the rules read a row and then
    /// write the same row, and the write goes there without hashing the key
    /// again. Forgotten whenever a row is added or removed (that may move rows).
    private var lastRead: (key: RecordKey, index: Dictionary<RecordKey, OwnedRow>.Index)?
    /// The server's clock: the smallest stamp the next write can get.
    private(set) var clock: Int64
    private var lastIssued: Int64 = .min
    /// The largest stamp a pull has handed out (or a horizon it moved a
    /// client to): later writes go above it, so a row never appears behind a
    /// cursor a client already holds.
    private var sealed: Int64 = .min
    /// Per kind, the position of the last tombstone purged: a cursor before it missed a deletion.
    private(set) var horizons: [String: PullCursor] = [:]
    /// Rows the rules wrote through ``write(_:owner:)``: each is one applied mutation.
    private(set) var ruleWrites = 0

    /// Empty tables whose clock starts at `clock`.
    init(clock: Int64) {
        self.clock = clock
    }

    /// A copy of `tables` whose clock stands at `clock`.
    init(_ tables: InMemoryTables, clock: Int64) {
        self.clock = clock
        table = tables.table
        lastIssued = tables.lastIssued
        sealed = tables.sealed
        horizons = tables.horizons
    }

    /// The rows, stamp counter and horizons as a value (what a backup copies).
    var tables: InMemoryTables {
        InMemoryTables(table: table, lastIssued: lastIssued, sealed: sealed, horizons: horizons)
    }

    /// The largest stamp this storage ever issued or handed out (as a row,
    /// a cursor or a horizon), 0 when none: never less than a stamp any
    /// client pulled from it, and it never goes down (purged tombstones
    /// included).
    var latestStamp: Int64 { max(0, lastIssued, sealed) }

    /// Advances the clock; until then, writes to different rows share a stamp.
    func advanceClock(by milliseconds: Int64) { clock += max(0, milliseconds) }

    // MARK: The rules' queries

    /// The row stored under `(kind, id)`, live or a tombstone, with its owner.
    func row(kind: String, id: String) -> OwnedRow? {
        let key = RecordKey(kind: kind, id: id)
        guard let index = table.index(forKey: key) else {
            lastRead = nil
            return nil
        }
        lastRead = (key, index)
        return table.values[index]
    }

    /// Stores a row for the rules (and counts it as an applied mutation).
    func write(_ row: ServerRow, owner: String, createdBy: String?) {
        store(row, owner: owner, createdBy: createdBy)
        ruleWrites += 1
    }

    /// Up to `limit` of `owner`'s rows of `kind` after `cursor`, in `(updatedAt, id)` order.
    func rows(owner: String, kind: String, after cursor: PullCursor?, limit: Int) -> [ServerRow] {
        let rows = table.values
            .filter { $0.owner == owner && $0.row.kind == kind }
            .map(\.row)
            .filter { row in cursor.map { $0 < PullCursor(updatedAt: row.updatedAt, id: row.id) } ?? true }
            .sorted { PullCursor(updatedAt: $0.updatedAt, id: $0.id) < PullCursor(updatedAt: $1.updatedAt, id: $1.id) }
        return Array(rows.prefix(limit))
    }

    /// The clock's stamp, unless a larger one is needed: above the row's
    /// `previous` stamp, above anything a pull handed out, and never below
    /// a stamp issued before. Rows written between two pulls may share a
    /// stamp; the `(updatedAt, id)` cursor handles the tie.
    func nextStamp(after previous: Int64?) -> Int64 {
        var value = max(clock, lastIssued)
        if sealed != .min { value = max(value, sealed + 1) }
        if let previous { value = max(value, previous + 1) }
        lastIssued = value
        return value
    }

    /// The position of the last tombstone of `kind` purged, if any.
    func horizon(kind: String) -> PullCursor? { horizons[kind] }

    /// A refused pull as the in-process transport reports it: an expired
    /// cursor asks for a resync, anything else is permanent.
    static func failure(_ refusal: PullRefusal) -> TransportError {
        switch refusal {
        case .cursorExpired(let kinds): return .cursorExpired(kinds: kinds)
        case .badRequest, .badCursor: return .permanent(reason: refusal.description)
        }
    }

    // MARK: Beyond the rules

    /// Stores a row as another writer would (not an applied mutation).
    func store(_ row: ServerRow, owner: String, createdBy: String? = nil) {
        let key = row.key
        if let lastRead, lastRead.key == key {
            // Replacing a value in place moves no row: the index stays valid.
            table.values[lastRead.index] = OwnedRow(row: row, owner: owner, createdBy: createdBy)
            return
        }
        lastRead = nil
        table[key] = OwnedRow(row: row, owner: owner, createdBy: createdBy)
    }

    /// Every stored row, live or a tombstone.
    var storedRows: Dictionary<RecordKey, OwnedRow>.Values { table.values }

    /// Notes that a pull handed out `page`: later writes stamp above every
    /// row in it and every cursor it gave.
    func seal(_ page: PullPage) {
        for row in page.rows { sealed = max(sealed, row.updatedAt) }
        for cursor in page.nextCursors.values { sealed = max(sealed, cursor.updatedAt) }
    }

    /// Forgets tombstones stamped before `stamp` (of `kind`, or of every
    /// kind) and moves each kind's horizon to the last one purged.
    ///
    /// - Returns: the number of tombstones purged.
    func purgeTombstones(olderThan stamp: Int64, kind: String?) -> Int {
        let purged = table.filter { key, stored in
            stored.row.isTombstone && stored.row.updatedAt < stamp && (kind == nil || key.kind == kind)
        }
        if !purged.isEmpty { lastRead = nil }
        for (key, stored) in purged {
            table[key] = nil
            let position = PullCursor(updatedAt: stored.row.updatedAt, id: stored.row.id)
            // Later writes must sort after the horizon, or a client moved to it would skip them.
            sealed = max(sealed, stored.row.updatedAt)
            if horizons[key.kind].map({ $0 < position }) ?? true { horizons[key.kind] = position }
        }
        return purged.count
    }
}

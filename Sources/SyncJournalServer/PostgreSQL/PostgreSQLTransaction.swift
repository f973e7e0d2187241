import SyncJournalProtocol

/// The queries of ``PostgreSQLStorage`` on one connection inside one open
/// transaction, each turning libpq's errors into ``StorageError``.
struct PostgreSQLTransaction {
    let connection: PostgreSQLConnection
    /// The storage's clock, or `nil` for the database server's clock.
    let now: (@Sendable () -> Int64)?

    private func run(_ sql: String, _ parameters: [PostgreSQLValue] = []) throws(StorageError) -> PostgreSQLRows {
        do throws(PostgreSQLError) { return try connection.execute(sql, parameters) } catch { throw .postgres(error) }
    }

    private func decode<T>(_ work: () throws(PostgreSQLError) -> T, table: String, key: String) throws(StorageError) -> T {
        do throws(PostgreSQLError) { return try work() } catch {
            throw .corrupt(table: table, key: key, reason: error.message)
        }
    }

    // MARK: Stamps

    /// Takes the stamp row's lock for the rest of the transaction and
    /// returns the last stamp issued.
    ///
    /// Why every push takes it first: a push reads rows and remembered
    /// operations, then writes. With the lock taken before those reads (and
    /// `read committed`, where each statement sees everything committed
    /// before it started), pushes run one after another on the database,
    /// exactly like SQLite's `begin immediate`: no lost update between two
    /// servers, and a resend racing its twin finds the twin's remembered
    /// result. It also makes stamp order commit order (see ``nextStamp()``).
    @discardableResult
    func lockStamp() throws(StorageError) -> Int64 {
        let rows = try run("select last from stamp where \"only\" = 1 for update")
        guard rows.count == 1 else { throw .corrupt(table: "stamp", key: "1", reason: "the stamp row is missing") }
        return try decode({ () throws(PostgreSQLError) in try rows.int64(0, 0) }, table: "stamp", key: "1")
    }

    /// The next stamp, `greatest(last + 1, now)`, recorded as the last one.
    ///
    /// Why this is sound with several servers on one database: the stamp
    /// row is locked (``lockStamp()``) from the push's first statement until
    /// its commit, so a second push gets its first stamp only after the first
    /// push committed. Stamps therefore increase in commit order; PostgreSQL
    /// makes a commit visible before it releases the transaction's locks, so
    /// a `repeatable read` snapshot that holds a stamp S holds every commit
    /// with a smaller stamp, and every write it does not hold will be stamped
    /// above S. A pull that has seen S never misses a row stamped ≤ S.
    func nextStamp() throws(StorageError) -> Int64 {
        let rows: PostgreSQLRows
        if let now {
            rows = try run("update stamp set last = greatest(last + 1, $1) where \"only\" = 1 returning last", [.int64(now())])
        } else {
            // The database server's clock: one clock for every sync-server process.
            rows = try run("""
                update stamp set last = greatest(last + 1, (extract(epoch from clock_timestamp()) * 1000)::bigint)
                where "only" = 1 returning last
                """)
        }
        guard rows.count == 1 else { throw .corrupt(table: "stamp", key: "1", reason: "the stamp row is missing") }
        return try decode({ () throws(PostgreSQLError) in try rows.int64(0, 0) }, table: "stamp", key: "1")
    }

    // MARK: Rows

    func row(kind: String, id: String) throws(StorageError) -> OwnedRow? {
        let rows = try run("select owner, fields, updated_at, deleted_at from rows where kind = $1 and id = $2", [.text(kind), .text(id)])
        guard rows.count > 0 else { return nil }
        let key = "\(kind)/\(id)"
        let (owner, bytes, updatedAt, deletedAt) = try decode({ () throws(PostgreSQLError) in
            (try rows.text(0, 0), try rows.bytes(0, 1), try rows.int64(0, 2), try rows.optionalInt64(0, 3))
        }, table: "rows", key: key)
        let fields = try StorageTransaction.decodeFields(bytes, table: "rows", key: key)
        return OwnedRow(row: ServerRow(kind: kind, id: id, fields: fields, updatedAt: updatedAt, deletedAt: deletedAt),
                                         owner: owner)
    }

    func write(_ row: ServerRow, owner: String) throws(StorageError) {
        _ = try run("""
            insert into rows (kind, id, owner, fields, updated_at, deleted_at) values ($1, $2, $3, $4, $5, $6)
            on conflict (kind, id) do update set owner = excluded.owner, fields = excluded.fields,
              updated_at = excluded.updated_at, deleted_at = excluded.deleted_at
            """, [.text(row.kind), .text(row.id), .text(owner), .bytes(StorageTransaction.encodeFields(row.fields)),
                  .int64(row.updatedAt), .int64(row.deletedAt)])
    }

    /// Up to `limit` rows of `owner` and `kind` after `cursor`, in `(updated_at, id)` order (ids by bytes: collate "C").
    func rows(owner: String, kind: String, after cursor: PullCursor?, limit: Int) throws(StorageError) -> [ServerRow] {
        let found: PostgreSQLRows
        if let cursor {
            found = try run("""
                select id, fields, updated_at, deleted_at from rows
                where kind = $1 and owner = $2 and (updated_at, id) > ($4, $5) order by updated_at, id limit $3
                """, [.text(kind), .text(owner), .int64(Int64(limit)), .int64(cursor.updatedAt), .text(cursor.id)])
        } else {
            found = try run("""
                select id, fields, updated_at, deleted_at from rows where kind = $1 and owner = $2 order by updated_at, id limit $3
                """, [.text(kind), .text(owner), .int64(Int64(limit))])
        }
        var rows: [ServerRow] = []
        rows.reserveCapacity(found.count)
        for index in 0..<found.count {
            let (id, bytes, updatedAt, deletedAt) = try decode({ () throws(PostgreSQLError) in
                (try found.text(index, 0), try found.bytes(index, 1), try found.int64(index, 2), try found.optionalInt64(index, 3))
            }, table: "rows", key: "\(kind)/row \(index)")
            let fields = try StorageTransaction.decodeFields(bytes, table: "rows", key: "\(kind)/\(id)")
            rows.append(ServerRow(kind: kind, id: id, fields: fields, updatedAt: updatedAt, deletedAt: deletedAt))
        }
        return rows
    }

    func deleteRow(kind: String, id: String) throws(StorageError) {
        _ = try run("delete from rows where kind = $1 and id = $2", [.text(kind), .text(id)])
    }

    // MARK: Remembered operations

    func remembered(owner: String, operationID: OperationID) throws(StorageError) -> ServerRow? {
        let key = operationID.description
        let rows = try run("""
            select kind, id, fields, updated_at, deleted_at from operations where owner = $1 and operation_id = $2
            """, [.text(owner), .text(key)])
        guard rows.count > 0 else { return nil }
        let (kind, id, bytes, updatedAt, deletedAt) = try decode({ () throws(PostgreSQLError) in
            (try rows.text(0, 0), try rows.text(0, 1), try rows.bytes(0, 2), try rows.int64(0, 3), try rows.optionalInt64(0, 4))
        }, table: "operations", key: "\(owner)/\(key)")
        let fields = try StorageTransaction.decodeFields(bytes, table: "operations", key: "\(owner)/\(key)")
        return ServerRow(kind: kind, id: id, fields: fields, updatedAt: updatedAt, deletedAt: deletedAt)
    }

    /// Remembers an applied operation. A plain insert: should another
    /// transaction have remembered the same (owner, operation id) first, the
    /// primary key refuses this one with `23505`, the storage rolls back and
    /// runs the push again, and the retry answers the first result.
    func remember(owner: String, operationID: OperationID, row: ServerRow) throws(StorageError) {
        _ = try run("""
            insert into operations (owner, operation_id, kind, id, fields, updated_at, deleted_at)
            values ($1, $2, $3, $4, $5, $6, $7)
            """, [.text(owner), .text(operationID.description), .text(row.kind), .text(row.id),
                  .bytes(StorageTransaction.encodeFields(row.fields)), .int64(row.updatedAt), .int64(row.deletedAt)])
    }

    // MARK: Horizons

    func horizon(kind: String) throws(StorageError) -> PullCursor? {
        let rows = try run("select updated_at, id from horizons where kind = $1", [.text(kind)])
        guard rows.count > 0 else { return nil }
        return try decode({ () throws(PostgreSQLError) in
            PullCursor(updatedAt: try rows.int64(0, 0), id: try rows.text(0, 1))
        }, table: "horizons", key: kind)
    }

    func setHorizon(kind: String, _ position: PullCursor) throws(StorageError) {
        _ = try run("""
            insert into horizons (kind, updated_at, id) values ($1, $2, $3)
            on conflict (kind) do update set updated_at = excluded.updated_at, id = excluded.id
            """, [.text(kind), .int64(position.updatedAt), .text(position.id)])
    }

    /// The tombstones stamped before `stamp` (of `kind`, or all), as positions per kind.
    func tombstones(before stamp: Int64, kind: String?) throws(StorageError) -> [(kind: String, position: PullCursor)] {
        let rows = try run("""
            select kind, id, updated_at from rows
            where deleted_at is not null and updated_at < $1 and ($2::text is null or kind = $2)
            """, [.int64(stamp), .text(kind)])
        var found: [(kind: String, position: PullCursor)] = []
        for index in 0..<rows.count {
            found.append(try decode({ () throws(PostgreSQLError) in
                (try rows.text(index, 0), PullCursor(updatedAt: try rows.int64(index, 2), id: try rows.text(index, 1)))
            }, table: "rows", key: "tombstone \(index)"))
        }
        return found
    }
}

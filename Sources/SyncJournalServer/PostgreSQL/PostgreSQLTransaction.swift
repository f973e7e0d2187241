import SyncJournalProtocol

/// The queries of ``PostgreSQLStorage`` on one connection inside one open
/// transaction, each turning libpq's errors into ``StorageError``.
struct PostgreSQLTransaction {
    let connection: PostgreSQLConnection
    /// The storage's clock, or `nil` for the database server's clock.
    let now: (@Sendable () -> Int64)?

    func run(_ sql: String, _ parameters: [PostgreSQLValue] = []) throws(StorageError) -> PostgreSQLRows {
        do throws(PostgreSQLError) { return try connection.execute(sql, parameters) } catch { throw .postgres(error) }
    }

    private func run(_ statement: PostgreSQLStatement) throws(StorageError) -> PostgreSQLRows {
        try run(statement.sql, statement.parameters)
    }

    func decode<T>(_ work: () throws(PostgreSQLError) -> T, table: String, key: String) throws(StorageError) -> T {
        try Self.decode(work, table: table, key: key)
    }

    private static func decode<T>(_ work: () throws(PostgreSQLError) -> T, table: String, key: String) throws(StorageError) -> T {
        do throws(PostgreSQLError) { return try work() } catch {
            throw .corrupt(table: table, key: key, reason: error.message)
        }
    }

    // MARK: Stamps

    /// Takes `owner`'s stamp row lock for the rest of the transaction and
    /// returns the last stamp issued to `owner` and the database server's
    /// clock in milliseconds.
    ///
    /// Why every push takes it first: a push reads rows and remembered
    /// operations, then writes. With the lock taken before those reads (and
    /// `read committed`, where each statement sees everything committed
    /// before it started), the pushes of one user run one after another on
    /// the database: no lost update between two servers, a resend racing its
    /// twin finds the twin's remembered result, and that user's stamp order
    /// is commit order. Pushes of other users take other rows and never wait.
    func lockStamps(owner: String) throws(StorageError) -> (last: Int64, databaseNow: Int64) {
        if let locked = try Self.decodeStamps(try run(Self.lockStampsStatement(owner: owner)), owner: owner) { return locked }
        return try createStamps(owner: owner)
    }

    /// The statement of ``lockStamps(owner:)`` when `owner` has pushed
    /// before: it locks the row without writing a new version of it (a push
    /// writes one, with its last stamp), and answers no row otherwise.
    static func lockStampsStatement(owner: String) -> PostgreSQLStatement {
        PostgreSQLStatement("""
            select last, (extract(epoch from clock_timestamp()) * 1000)::bigint from user_stamps where owner = $1 for update
            """, [.text(owner)])
    }

    /// The result of ``lockStampsStatement(owner:)`` (`nil`: `owner` has no stamp row yet).
    static func decodeStamps(_ rows: PostgreSQLRows, owner: String) throws(StorageError) -> (last: Int64, databaseNow: Int64)? {
        guard rows.count > 0 else { return nil }
        return try decode({ () throws(PostgreSQLError) in (try rows.int64(0, 0), try rows.int64(0, 1)) }, table: "user_stamps", key: owner)
    }

    /// `owner`'s first push: creates the stamp row from the `stamp` row of
    /// schema version 1, the floor at or above every stamp issued before
    /// stamps were counted per user, and locks it. One statement:
    /// `on conflict … do update` locks the row that is there, or waits for a
    /// racing first push and locks its row.
    func createStamps(owner: String) throws(StorageError) -> (last: Int64, databaseNow: Int64) {
        let rows = try run("""
            insert into user_stamps (owner, last) select $1, last from stamp where "only" = 1
            on conflict (owner) do update set last = user_stamps.last
            returning last, (extract(epoch from clock_timestamp()) * 1000)::bigint
            """, [.text(owner)])
        guard let stamps = try Self.decodeStamps(rows, owner: owner) else {
            throw .corrupt(table: "stamp", key: "1", reason: "the stamp row is missing")
        }
        return stamps
    }

    /// The last stamp issued to `owner` (the floor of schema version 1 for
    /// a user who never pushed), or drawn in a shared space `owner` is a
    /// member of, whichever is larger: at or above every stamp and cursor
    /// the user was handed, and never lowered, tombstone purges included.
    func latestStamp(owner: String) throws(StorageError) -> Int64 {
        let rows = try run("""
            select greatest(coalesce((select last from user_stamps where owner = $1), (select last from stamp where "only" = 1)),
                            (select max(s.last) from space_members m join spaces s on s.id = m.space where m.member = $1))
            """, [.text(owner)])
        guard rows.count > 0, let last = try decode({ () throws(PostgreSQLError) in try rows.optionalInt64(0, 0) }, table: "user_stamps", key: owner) else {
            throw .corrupt(table: "stamp", key: "1", reason: "the stamp row is missing")
        }
        return last
    }

    /// The largest stamp the database issued to anyone, in any space: what
    /// a device may have seen of a space it has since been removed from,
    /// which ``latestStamp(owner:)`` no longer covers. Asked only when a
    /// device's seen stamp is past the user's own (it reads every user's
    /// and every space's counter).
    func latestStampOfAnyone() throws(StorageError) -> Int64 {
        let rows = try run("""
            select greatest((select last from stamp where "only" = 1), (select max(last) from user_stamps), (select max(last) from spaces))
            """)
        guard rows.count > 0, let last = try decode({ () throws(PostgreSQLError) in try rows.optionalInt64(0, 0) }, table: "stamp", key: "1") else {
            throw .corrupt(table: "stamp", key: "1", reason: "the stamp row is missing")
        }
        return last
    }

    // MARK: Identity

    /// The database's identity.
    func identity() throws(StorageError) -> ServerIdentity {
        let rows = try run("select identity from server_identity where \"only\" = 1")
        guard rows.count > 0 else { throw .corrupt(table: "server_identity", key: "1", reason: "the identity row is missing") }
        let text = try decode({ () throws(PostgreSQLError) in try rows.text(0, 0) }, table: "server_identity", key: "1")
        guard let identity = ServerIdentity(text) else {
            throw .corrupt(table: "server_identity", key: "1", reason: "\"\(text.prefix(80))\" is not an identity (1 to 64 of A-Z a-z 0-9 - _)")
        }
        return identity
    }

    /// Replaces the database's identity.
    func setIdentity(_ identity: ServerIdentity) throws(StorageError) {
        _ = try run("""
            insert into server_identity ("only", identity) values (1, $1) on conflict ("only") do update set identity = excluded.identity
            """, [.text(identity.text)])
    }

    /// Begins a push's transaction with `begin` and reads what it needs,
    /// all in one round trip: takes `owner`'s stamp lock (as
    /// ``lockStamps(owner:)``), then reads the remembered results of
    /// `operationIDs` and the stored rows under `keys`. The lock comes first
    /// in the pipeline, so both reads see every push of `owner` committed
    /// before it, exactly as when sent one by one. A user's first push finds
    /// no stamp row to lock: it creates one, and reads again under that lock.
    func openPush(begin: String, owner: String, operationIDs: [String], keys: [RowAddress]) throws(StorageError) -> PostgreSQLPushOpening {
        var statements = [PostgreSQLStatement(begin), Self.lockStampsStatement(owner: owner)]
        if !operationIDs.isEmpty { statements.append(Self.rememberedStatement(owner: owner, operationIDs: operationIDs)) }
        if !keys.isEmpty { statements.append(Self.rowsStatement(keys: keys)) }
        let results: [Result<PostgreSQLRows, PostgreSQLError>]
        do throws(PostgreSQLError) { results = try connection.pipeline(statements) } catch { throw .postgres(error) }
        var next = 0
        func take() throws(StorageError) -> PostgreSQLRows {
            defer { next += 1 }
            do throws(PostgreSQLError) { return try results[next].get() } catch { throw .postgres(error) }
        }
        _ = try take()
        guard let (last, databaseNow) = try Self.decodeStamps(try take(), owner: owner) else {
            let (last, databaseNow) = try createStamps(owner: owner)
            return PostgreSQLPushOpening(lastStamp: last, databaseNow: databaseNow,
                                         remembered: try remembered(owner: owner, operationIDs: operationIDs), rows: try rows(keys: keys),
                                         spaces: [:])
        }
        let remembered = operationIDs.isEmpty ? [:] : try Self.decodeRemembered(try take(), owner: owner)
        let rows = keys.isEmpty ? [:] : try Self.decodeRows(try take())
        return PostgreSQLPushOpening(lastStamp: last, databaseNow: databaseNow, remembered: remembered, rows: rows, spaces: [:])
    }

    // MARK: Rows

    func row(_ key: RecordKey, owner: String) throws(StorageError) -> OwnedRow? {
        try rows(keys: [RowAddress(key: key, owner: owner)])[RowAddress(key: key, owner: owner)]
    }

    func rows(keys: [RowAddress]) throws(StorageError) -> [RowAddress: OwnedRow] {
        guard !keys.isEmpty else { return [:] }
        return try Self.decodeRows(try run(Self.rowsStatement(keys: keys)))
    }

    /// The statement of ``rows(keys:)`` (`keys` not empty), for a pipeline.
    static func rowsStatement(keys: [RowAddress]) -> PostgreSQLStatement {
        PostgreSQLStatement("""
            select r.kind, r.id, r.owner, r.fields, r.updated_at, r.deleted_at, r.created_by, r.model_version, r.space
            from rows r join unnest($1::text[], $2::text[], $3::text[], $4::text[]) as k(space, owner, kind, id)
              on r.space = k.space and r.owner = k.owner and r.kind = k.kind and r.id = k.id
            """, [.textArray(keys.map { StorageTransaction.column($0.key.space) }), .textArray(keys.map(\.owner)),
                  .textArray(keys.map(\.key.kind)), .textArray(keys.map(\.key.id))])
    }

    /// The result of ``rows(keys:)``'s statement.
    static func decodeRows(_ found: PostgreSQLRows) throws(StorageError) -> [RowAddress: OwnedRow] {
        var rows: [RowAddress: OwnedRow] = [:]
        rows.reserveCapacity(found.count)
        for index in 0..<found.count {
            let (kind, id, owner, bytes, updatedAt, deletedAt, createdBy, storedVersion, column) = try decode({ () throws(PostgreSQLError) in
                (try found.text(index, 0), try found.text(index, 1), try found.text(index, 2), try found.bytes(index, 3),
                 try found.int64(index, 4), try found.optionalInt64(index, 5), try found.optionalText(index, 6), try found.optionalInt64(index, 7),
                 try found.text(index, 8))
            }, table: "rows", key: "batch row \(index)")
            let space = try StorageTransaction.space(column, table: "rows", key: "\(kind)/\(id)")
            let fields = try StorageTransaction.decodeFields(bytes, table: "rows", key: "\(kind)/\(id)")
            let modelVersion = try StorageTransaction.modelVersion(storedVersion, table: "rows", key: "\(kind)/\(id)")
            rows[RowAddress(key: RecordKey(kind: kind, id: id, space: space), owner: owner)] = OwnedRow(
                row: ServerRow(kind: kind, id: id, fields: fields, updatedAt: updatedAt, deletedAt: deletedAt, modelVersion: modelVersion, space: space),
                owner: owner, createdBy: createdBy)
        }
        return rows
    }

    /// Writes a push's outcome in one statement: the final version of every
    /// row it changed, every operation it applied (to be remembered), and
    /// `owner`'s last stamp. The operations are dated `rememberedAt` (server time).
    ///
    /// A row is replaced only when it belongs to `owner`: pushes of different
    /// users run at once, so another user may have created the same record
    /// after this push read it as missing. Such a row is left alone and this
    /// throws a serialization failure (`40001`), which runs the push again;
    /// the rerun reads the other user's row and refuses the mutation as
    /// forbidden. An operation id remembered by a racing transaction is a
    /// unique violation (`23505`), also run again.
    func write(owner: String, rows written: [(row: ServerRow, owner: String, createdBy: String?)], operations: [(operationID: String, row: ServerRow)],
               lastStamp: Int64?, spaceStamps: [SpaceID: Int64] = [:], rememberedAt: Int64) throws(StorageError) {
        let rows = written.map(\.row)
        guard !rows.isEmpty || !operations.isEmpty || lastStamp != nil else { return }
        if !spaceStamps.isEmpty {
            let spaces = spaceStamps.keys.sorted(by: <)
            _ = try run("update spaces set last = t.l from unnest($1::text[], $2::int8[]) as t(s, l) where spaces.id = t.s",
                        [.textArray(spaces.map { StorageTransaction.column($0) }), .int64Array(spaces.map { spaceStamps[$0] })])
        }
        let written = try run("""
            with
            changed as (
              insert into rows (space, owner, kind, id, fields, updated_at, deleted_at, created_by, model_version)
              select s, w, k, i, f, u, d, nullif(c, ''), v
              from unnest($18::text[], $19::text[], $2::text[], $3::text[], $4::bytea[], $5::int8[], $6::int8[], $15::text[], $16::int8[])
                as t(s, w, k, i, f, u, d, c, v)
              on conflict (space, owner, kind, id) do update set fields = excluded.fields, updated_at = excluded.updated_at,
                deleted_at = excluded.deleted_at, created_by = excluded.created_by, model_version = excluded.model_version
              returning 1
            ),
            remembered as (
              insert into operations (owner, operation_id, kind, id, fields, updated_at, deleted_at, remembered_at, model_version, space)
              select $1, o, k, i, f, u, d, $14, v, s
              from unnest($7::text[], $8::text[], $9::text[], $10::bytea[], $11::int8[], $12::int8[], $17::int8[], $20::text[])
                as t(o, k, i, f, u, d, v, s)
            ),
            stamped as (
              update user_stamps set last = $13 where owner = $1 and $13::int8 is not null
            )
            select count(*)::int8 from changed
            """, [.text(owner),
                  .textArray(rows.map(\.kind)), .textArray(rows.map(\.id)),
                  .bytesArray(rows.map { StorageTransaction.encodeFields($0.fields) }),
                  .int64Array(rows.map(\.updatedAt)), .int64Array(rows.map(\.deletedAt)),
                  .textArray(operations.map(\.operationID)),
                  .textArray(operations.map(\.row.kind)), .textArray(operations.map(\.row.id)),
                  .bytesArray(operations.map { StorageTransaction.encodeFields($0.row.fields) }),
                  .int64Array(operations.map(\.row.updatedAt)), .int64Array(operations.map(\.row.deletedAt)),
                  .int64(lastStamp), .int64(rememberedAt),
                  // An operation id is never empty: "" stands for a row of no known create.
                  .textArray(written.map { $0.createdBy ?? "" }),
                  .int64Array(rows.map { $0.modelVersion.map(Int64.init) }),
                  .int64Array(operations.map { $0.row.modelVersion.map(Int64.init) }),
                  .textArray(rows.map { StorageTransaction.column($0.space) }), .textArray(written.map(\.owner)),
                  .textArray(operations.map { StorageTransaction.column($0.row.space) })])
        let count = try decode({ () throws(PostgreSQLError) in try written.int64(0, 0) }, table: "rows", key: owner)
        if count != Int64(rows.count) {
            throw .postgres(PostgreSQLError(sqlState: "40001",
                                            message: "another user created one of the records this push creates; running it again",
                                            context: "push", connection: connection.redactedConnection))
        }
    }

    /// Up to `limit` rows of `owner` and `kind` after `cursor`, in `(updated_at, id)` order (ids by bytes: collate "C").
    func rows(in space: SpaceID, owner: String, kind: String, after cursor: PullCursor?, limit: Int) throws(StorageError) -> [ServerRow] {
        let found: PostgreSQLRows
        let column = StorageTransaction.column(space)
        if let cursor {
            found = try run("""
                select id, fields, updated_at, deleted_at, model_version from rows
                where space = $6 and owner = $2 and kind = $1 and (updated_at, id) > ($4, $5) order by updated_at, id limit $3
                """, [.text(kind), .text(owner), .int64(Int64(limit)), .int64(cursor.updatedAt), .text(cursor.id), .text(column)])
        } else {
            found = try run("""
                select id, fields, updated_at, deleted_at, model_version from rows where space = $4 and owner = $2 and kind = $1
                order by updated_at, id limit $3
                """, [.text(kind), .text(owner), .int64(Int64(limit)), .text(column)])
        }
        var rows: [ServerRow] = []
        rows.reserveCapacity(found.count)
        for index in 0..<found.count {
            let (id, bytes, updatedAt, deletedAt, storedVersion) = try decode({ () throws(PostgreSQLError) in
                (try found.text(index, 0), try found.bytes(index, 1), try found.int64(index, 2), try found.optionalInt64(index, 3),
                 try found.optionalInt64(index, 4))
            }, table: "rows", key: "\(kind)/row \(index)")
            let fields = try StorageTransaction.decodeFields(bytes, table: "rows", key: "\(kind)/\(id)")
            let modelVersion = try StorageTransaction.modelVersion(storedVersion, table: "rows", key: "\(kind)/\(id)")
            rows.append(ServerRow(kind: kind, id: id, fields: fields, updatedAt: updatedAt, deletedAt: deletedAt, modelVersion: modelVersion,
                                  space: space))
        }
        return rows
    }

    // MARK: Remembered operations

    /// The remembered results of `owner`'s `operationIDs`, in one statement.
    func remembered(owner: String, operationIDs: [String]) throws(StorageError) -> [String: ServerRow] {
        guard !operationIDs.isEmpty else { return [:] }
        return try Self.decodeRemembered(try run(Self.rememberedStatement(owner: owner, operationIDs: operationIDs)), owner: owner)
    }

    /// The statement of ``remembered(owner:operationIDs:)`` (`operationIDs` not empty), for a pipeline.
    static func rememberedStatement(owner: String, operationIDs: [String]) -> PostgreSQLStatement {
        PostgreSQLStatement("""
            select operation_id, kind, id, fields, updated_at, deleted_at, model_version, space from operations
            where owner = $1 and operation_id = any($2::text[])
            """, [.text(owner), .textArray(operationIDs)])
    }

    /// The result of ``remembered(owner:operationIDs:)``'s statement.
    static func decodeRemembered(_ found: PostgreSQLRows, owner: String) throws(StorageError) -> [String: ServerRow] {
        var remembered: [String: ServerRow] = [:]
        for index in 0..<found.count {
            let (operationID, kind, id, bytes, updatedAt, deletedAt, storedVersion, column) = try decode({ () throws(PostgreSQLError) in
                (try found.text(index, 0), try found.text(index, 1), try found.text(index, 2), try found.bytes(index, 3),
                 try found.int64(index, 4), try found.optionalInt64(index, 5), try found.optionalInt64(index, 6), try found.text(index, 7))
            }, table: "operations", key: "\(owner)/row \(index)")
            let fields = try StorageTransaction.decodeFields(bytes, table: "operations", key: "\(owner)/\(operationID)")
            let modelVersion = try StorageTransaction.modelVersion(storedVersion, table: "operations", key: "\(owner)/\(operationID)")
            remembered[operationID] = ServerRow(kind: kind, id: id, fields: fields, updatedAt: updatedAt, deletedAt: deletedAt,
                                                modelVersion: modelVersion,
                                                space: try StorageTransaction.space(column, table: "operations", key: "\(owner)/\(operationID)"))
        }
        return remembered
    }

    // MARK: Horizons

    /// The position of the last tombstone of `owner` and `kind` purged: the
    /// later of the per-user horizon and the per-kind horizon schema
    /// version 1 kept (whose stamps every user's counter starts above).
    func horizon(owner: String, kind: String) throws(StorageError) -> PullCursor? {
        let rows = try run("""
            select updated_at, id from (
              select updated_at, id from user_horizons where owner = $1 and kind = $2
              union all
              select updated_at, id from horizons where kind = $2
            ) as h order by updated_at desc, id desc limit 1
            """, [.text(owner), .text(kind)])
        guard rows.count > 0 else { return nil }
        return try decode({ () throws(PostgreSQLError) in
            PullCursor(updatedAt: try rows.int64(0, 0), id: try rows.text(0, 1))
        }, table: "user_horizons", key: "\(owner)/\(kind)")
    }

    /// Moves `owner`'s horizon of `kind` up to `position` (never down).
    func raiseHorizon(owner: String, kind: String, to position: PullCursor) throws(StorageError) {
        _ = try run("""
            insert into user_horizons (owner, kind, updated_at, id) values ($1, $2, $3, $4)
            on conflict (owner, kind) do update set updated_at = excluded.updated_at, id = excluded.id
            where (user_horizons.updated_at, user_horizons.id) < (excluded.updated_at, excluded.id)
            """, [.text(owner), .text(kind), .int64(position.updatedAt), .text(position.id)])
    }

    /// The tombstones stamped before `stamp` (of `kind`, or all), with their owners.
    func tombstones(before stamp: Int64, kind: String?) throws(StorageError) -> [(space: String, owner: String, kind: String, position: PullCursor)] {
        let rows = try run("""
            select owner, kind, id, updated_at, space from rows
            where deleted_at is not null and updated_at < $1 and ($2::text is null or kind = $2)
            """, [.int64(stamp), .text(kind)])
        var found: [(space: String, owner: String, kind: String, position: PullCursor)] = []
        for index in 0..<rows.count {
            found.append(try decode({ () throws(PostgreSQLError) in
                (try rows.text(index, 4), try rows.text(index, 0), try rows.text(index, 1),
                 PullCursor(updatedAt: try rows.int64(index, 3), id: try rows.text(index, 2)))
            }, table: "rows", key: "tombstone \(index)"))
        }
        return found
    }

    /// Deletes each of `owner`'s tombstones at `positions` of `kind`s that
    /// is still that very tombstone (a push may have written the record
    /// again since it was found); returns the ones deleted.
    func deleteTombstones(space: String = "", owner: String, _ tombstones: [(kind: String, position: PullCursor)]) throws(StorageError)
        -> [(kind: String, position: PullCursor)] {
        guard !tombstones.isEmpty else { return [] }
        let rows = try run("""
            delete from rows r using unnest($2::text[], $3::text[], $4::int8[]) as t(k, i, u)
            where r.space = $5 and r.owner = $1 and r.kind = t.k and r.id = t.i and r.updated_at = t.u and r.deleted_at is not null
            returning r.kind, r.id, r.updated_at
            """, [.text(owner), .textArray(tombstones.map(\.kind)), .textArray(tombstones.map(\.position.id)),
                  .int64Array(tombstones.map(\.position.updatedAt)), .text(space)])
        var deleted: [(kind: String, position: PullCursor)] = []
        for index in 0..<rows.count {
            deleted.append(try decode({ () throws(PostgreSQLError) in
                (try rows.text(index, 0), PullCursor(updatedAt: try rows.int64(index, 2), id: try rows.text(index, 1)))
            }, table: "rows", key: "tombstone \(index)"))
        }
        return deleted
    }
}

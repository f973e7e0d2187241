import SyncJournalCore
import SyncJournalFieldCodec
import SyncJournalProtocol

/// The queries of ``SQLiteStorage`` on one connection inside one open
/// transaction, each turning SQLite's errors into ``StorageError``.
struct StorageTransaction {
    let database: SQLiteDatabase
    let now: @Sendable () -> Int64

    func sql<T>(_ work: () throws(SQLiteError) -> T) throws(StorageError) -> T {
        do throws(SQLiteError) { return try work() } catch { throw StorageError(sqlite: error) }
    }

    // MARK: Rows

    /// A row's columns as stored, its fields still the stored bytes: what
    /// both the value reads and the encoded reads of a push start from.
    typealias StoredRow = (owner: String, fields: [UInt8], updatedAt: Int64, deletedAt: Int64?, createdBy: String?, modelVersion: Int64?)

    func storedRow(_ key: RecordKey, owner: String) throws(StorageError) -> StoredRow? {
        try sql { () throws(SQLiteError) -> StoredRow? in
            try database.withStatement("""
                select owner, fields, updated_at, deleted_at, created_by, model_version from rows
                where space = ?1 and owner = ?2 and kind = ?3 and id = ?4
                """) { statement throws(SQLiteError) in
                statement.bind(1, Self.column(key.space))
                statement.bind(2, owner)
                statement.bind(3, key.kind)
                statement.bind(4, key.id)
                guard try statement.step() else { return nil }
                return (statement.text(0), statement.bytes(1), statement.int64(2), statement.optionalInt64(3), statement.optionalText(4),
                        statement.optionalInt64(5))
            }
        }
    }

    /// Inserts or replaces a row whose fields are already encoded.
    func writeRow(space: SpaceID, kind: String, id: String, owner: String, fields: [UInt8], updatedAt: Int64, deletedAt: Int64?,
                  createdBy: String?, modelVersion: Int?) throws(StorageError) {
        try sql { () throws(SQLiteError) in
            try database.withStatement("""
                insert into rows (kind, id, owner, fields, updated_at, deleted_at, created_by, model_version, space)
                values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                on conflict (space, owner, kind, id) do update set fields = excluded.fields,
                  updated_at = excluded.updated_at, deleted_at = excluded.deleted_at, created_by = excluded.created_by,
                  model_version = excluded.model_version
                """) { statement throws(SQLiteError) in
                statement.bind(1, kind)
                statement.bind(2, id)
                statement.bind(3, owner)
                statement.bind(4, bytes: fields)
                statement.bind(5, updatedAt)
                statement.bind(6, deletedAt)
                statement.bind(7, createdBy)
                statement.bind(8, modelVersion.map(Int64.init))
                statement.bind(9, Self.column(space))
                _ = try statement.step()
            }
        }
        try writeReferences(space: space, kind: kind, id: id, owner: owner, fields: deletedAt == nil ? fields : nil)
    }

    func row(_ key: RecordKey, owner: String) throws(StorageError) -> OwnedRow? {
        guard let found = try storedRow(key, owner: owner) else { return nil }
        let fields = try Self.decodeFields(found.fields, table: "rows", key: key.description)
        let modelVersion = try Self.modelVersion(found.modelVersion, table: "rows", key: key.description)
        return OwnedRow(row: ServerRow(kind: key.kind, id: key.id, fields: fields, updatedAt: found.updatedAt, deletedAt: found.deletedAt,
                                       modelVersion: modelVersion, space: key.space),
                        owner: found.owner, createdBy: found.createdBy)
    }

    func write(_ row: ServerRow, owner: String, createdBy: String?) throws(StorageError) {
        try writeRow(space: row.space, kind: row.kind, id: row.id, owner: owner, fields: Self.encodeFields(row.fields), updatedAt: row.updatedAt,
                     deletedAt: row.deletedAt, createdBy: createdBy, modelVersion: row.modelVersion)
    }

    /// Up to `limit` rows of `kind` in `space` held by `owner` after `cursor`, in `(updated_at, id)` order.
    func rows(in space: SpaceID, owner: String, kind: String, after cursor: PullCursor?, limit: Int) throws(StorageError) -> [ServerRow] {
        let query = cursor == nil
            ? """
              select id, fields, updated_at, deleted_at, model_version from rows
              where space = ?6 and owner = ?2 and kind = ?1 order by updated_at, id limit ?3
              """
            : """
              select id, fields, updated_at, deleted_at, model_version from rows
              where space = ?6 and owner = ?2 and kind = ?1 and (updated_at, id) > (?4, ?5) order by updated_at, id limit ?3
              """
        let found: [(id: String, fields: [UInt8], updatedAt: Int64, deletedAt: Int64?, modelVersion: Int64?)] = try sql { () throws(SQLiteError) in
            try database.withStatement(query) { statement throws(SQLiteError) in
                statement.bind(1, kind)
                statement.bind(2, owner)
                statement.bind(3, Int64(limit))
                statement.bind(6, Self.column(space))
                if let cursor {
                    statement.bind(4, cursor.updatedAt)
                    statement.bind(5, cursor.id)
                }
                var found: [(id: String, fields: [UInt8], updatedAt: Int64, deletedAt: Int64?, modelVersion: Int64?)] = []
                while try statement.step() {
                    found.append((statement.text(0), statement.bytes(1), statement.int64(2), statement.optionalInt64(3), statement.optionalInt64(4)))
                }
                return found
            }
        }
        var rows: [ServerRow] = []
        rows.reserveCapacity(found.count)
        for entry in found {
            let fields = try Self.decodeFields(entry.fields, table: "rows", key: "\(kind)/\(entry.id)")
            let modelVersion = try Self.modelVersion(entry.modelVersion, table: "rows", key: "\(kind)/\(entry.id)")
            rows.append(ServerRow(kind: kind, id: entry.id, fields: fields, updatedAt: entry.updatedAt, deletedAt: entry.deletedAt,
                                  modelVersion: modelVersion, space: space))
        }
        return rows
    }

    // MARK: Remembered operations

    /// A remembered operation's row as stored, its fields still the stored bytes.
    typealias StoredOperation = (kind: String, id: String, fields: [UInt8], updatedAt: Int64, deletedAt: Int64?, modelVersion: Int64?,
                                 space: String)

    func storedOperation(owner: String, operationID: OperationID) throws(StorageError) -> StoredOperation? {
        try sql { () throws(SQLiteError) -> StoredOperation? in
            try database.withStatement("""
                select kind, id, fields, updated_at, deleted_at, model_version, space from operations where owner = ?1 and operation_id = ?2
                """) { statement throws(SQLiteError) in
                statement.bind(1, owner)
                statement.bind(2, operationID.description)
                guard try statement.step() else { return nil }
                return (statement.text(0), statement.text(1), statement.bytes(2), statement.int64(3), statement.optionalInt64(4),
                        statement.optionalInt64(5), statement.text(6))
            }
        }
    }

    /// Remembers an operation's result row whose fields are already encoded.
    func insertOperation(owner: String, operationID: OperationID, space: SpaceID, kind: String, id: String, fields: [UInt8], updatedAt: Int64,
                         deletedAt: Int64?, modelVersion: Int?, at rememberedAt: Int64) throws(StorageError) {
        try sql { () throws(SQLiteError) in
            try database.withStatement("""
                insert into operations (owner, operation_id, kind, id, fields, updated_at, deleted_at, remembered_at, model_version, space)
                values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                """) { statement throws(SQLiteError) in
                statement.bind(1, owner)
                statement.bind(2, operationID.description)
                statement.bind(3, kind)
                statement.bind(4, id)
                statement.bind(5, bytes: fields)
                statement.bind(6, updatedAt)
                statement.bind(7, deletedAt)
                statement.bind(8, rememberedAt)
                statement.bind(9, modelVersion.map(Int64.init))
                statement.bind(10, Self.column(space))
                _ = try statement.step()
            }
        }
    }

    func remembered(owner: String, operationID: OperationID) throws(StorageError) -> ServerRow? {
        guard let found = try storedOperation(owner: owner, operationID: operationID) else { return nil }
        let key = "\(owner)/\(operationID.description)"
        let fields = try Self.decodeFields(found.fields, table: "operations", key: key)
        let modelVersion = try Self.modelVersion(found.modelVersion, table: "operations", key: key)
        return ServerRow(kind: found.kind, id: found.id, fields: fields, updatedAt: found.updatedAt, deletedAt: found.deletedAt,
                         modelVersion: modelVersion, space: try Self.space(found.space, table: "operations", key: key))
    }

    func remember(owner: String, operationID: OperationID, row: ServerRow, at rememberedAt: Int64) throws(StorageError) {
        try insertOperation(owner: owner, operationID: operationID, space: row.space, kind: row.kind, id: row.id, fields: Self.encodeFields(row.fields),
                            updatedAt: row.updatedAt, deletedAt: row.deletedAt, modelVersion: row.modelVersion, at: rememberedAt)
    }

    /// Forgets at most `limit` operations remembered before `cutoff` (server
    /// time), oldest first, and says how many it forgot.
    func forgetOperations(rememberedBefore cutoff: Int64, limit: Int) throws(StorageError) -> Int {
        try sql { () throws(SQLiteError) in
            try database.withStatement("""
                delete from operations where (owner, operation_id) in (
                  select owner, operation_id from operations where remembered_at < ?1 order by remembered_at limit ?2)
                """) { statement throws(SQLiteError) in
                statement.bind(1, cutoff)
                statement.bind(2, Int64(limit))
                _ = try statement.step()
            }
            return database.changes
        }
    }

    // MARK: Stamps

    /// The next stamp, `max(now, last + 1)`, recorded as the last one.
    func nextStamp() throws(StorageError) -> Int64 {
        let last: Int64? = try sql { () throws(SQLiteError) in
            try database.withStatement("select last from stamp where only = 1") { statement throws(SQLiteError) in
                try statement.step() ? statement.int64(0) : nil
            }
        }
        guard let last else { throw .corrupt(table: "stamp", key: "1", reason: "the stamp row is missing") }
        let (following, overflow) = last.addingReportingOverflow(1)
        guard !overflow else { throw .corrupt(table: "stamp", key: "1", reason: "the last stamp is Int64.max") }
        let stamp = max(now(), following)
        try sql { () throws(SQLiteError) in
            try database.withStatement("update stamp set last = ?1 where only = 1") { statement throws(SQLiteError) in
                statement.bind(1, stamp)
                _ = try statement.step()
            }
        }
        return stamp
    }

    /// The next stamp for a write into `space`: the database's one counter
    /// serves every space, and a shared space keeps it as its last stamp
    /// (what pulls compare cursors against to skip an unchanged space).
    func nextStamp(in space: SpaceID) throws(StorageError) -> Int64 {
        let stamp = try nextStamp()
        guard !space.isPersonal else { return stamp }
        try sql { () throws(SQLiteError) in
            try database.withStatement("update spaces set last = ?1 where id = ?2") { statement throws(SQLiteError) in
                statement.bind(1, stamp)
                statement.bind(2, Self.column(space))
                _ = try statement.step()
            }
        }
        return stamp
    }

    /// The last stamp issued (the counter, which purges never lower).
    func lastStamp() throws(StorageError) -> Int64 {
        let last: Int64? = try sql { () throws(SQLiteError) in
            try database.withStatement("select last from stamp where only = 1") { statement throws(SQLiteError) in
                try statement.step() ? statement.int64(0) : nil
            }
        }
        guard let last else { throw .corrupt(table: "stamp", key: "1", reason: "the stamp row is missing") }
        return last
    }

    // MARK: Identity

    /// The database's identity.
    func identity() throws(StorageError) -> ServerIdentity {
        let text: String? = try sql { () throws(SQLiteError) in
            try database.withStatement("select identity from server_identity where only = 1") { statement throws(SQLiteError) in
                try statement.step() ? statement.text(0) : nil
            }
        }
        guard let text else { throw .corrupt(table: "server_identity", key: "1", reason: "the identity row is missing") }
        guard let identity = ServerIdentity(text) else {
            throw .corrupt(table: "server_identity", key: "1", reason: "\"\(text.prefix(80))\" is not an identity (1 to 64 of A-Z a-z 0-9 - _)")
        }
        return identity
    }

    /// Replaces the database's identity.
    func setIdentity(_ identity: ServerIdentity) throws(StorageError) {
        try sql { () throws(SQLiteError) in
            try database.withStatement("insert or replace into server_identity (only, identity) values (1, ?1)") { statement throws(SQLiteError) in
                statement.bind(1, identity.text)
                _ = try statement.step()
            }
        }
    }

    // MARK: Horizons

    func horizon(kind: String, in space: SpaceID) throws(StorageError) -> PullCursor? {
        try sql { () throws(SQLiteError) in
            try database.withStatement("select updated_at, id from horizons where space = ?2 and kind = ?1") { statement throws(SQLiteError) in
                statement.bind(1, kind)
                statement.bind(2, Self.column(space))
                return try statement.step() ? PullCursor(updatedAt: statement.int64(0), id: statement.text(1)) : nil
            }
        }
    }

    func setHorizon(kind: String, in space: String, _ position: PullCursor) throws(StorageError) {
        try sql { () throws(SQLiteError) in
            try database.withStatement("""
                insert into horizons (kind, updated_at, id, space) values (?1, ?2, ?3, ?4)
                on conflict (space, kind) do update set updated_at = excluded.updated_at, id = excluded.id
                """) { statement throws(SQLiteError) in
                statement.bind(1, kind)
                statement.bind(4, space)
                statement.bind(2, position.updatedAt)
                statement.bind(3, position.id)
                _ = try statement.step()
            }
        }
    }

    /// A tombstone as purging finds it: where it is, and its position in its kind.
    typealias StoredTombstone = (space: String, owner: String, kind: String, position: PullCursor)

    /// The tombstones stamped before `stamp` (of `kind`, or all).
    func tombstones(before stamp: Int64, kind: String?) throws(StorageError) -> [StoredTombstone] {
        try sql { () throws(SQLiteError) in
            try database.withStatement("""
                select space, owner, kind, id, updated_at from rows
                where deleted_at is not null and updated_at < ?1 and (?2 is null or kind = ?2)
                """) { statement throws(SQLiteError) in
                statement.bind(1, stamp)
                if let kind { statement.bind(2, kind) }
                var found: [StoredTombstone] = []
                while try statement.step() {
                    found.append((statement.text(0), statement.text(1), statement.text(2),
                                  PullCursor(updatedAt: statement.int64(4), id: statement.text(3))))
                }
                return found
            }
        }
    }

    func deleteRow(_ tombstone: StoredTombstone) throws(StorageError) {
        try sql { () throws(SQLiteError) in
            try database.withStatement("delete from rows where space = ?1 and owner = ?2 and kind = ?3 and id = ?4") { statement throws(SQLiteError) in
                statement.bind(1, tombstone.space)
                statement.bind(2, tombstone.owner)
                statement.bind(3, tombstone.kind)
                statement.bind(4, tombstone.position.id)
                _ = try statement.step()
            }
        }
    }

    // MARK: Spaces in columns

    /// The `space` column of a row of `space`: empty for the personal space.
    static func column(_ space: SpaceID) -> String { space.text ?? "" }

    /// The space a stored `space` column names.
    static func space(_ column: String, table: String, key: String) throws(StorageError) -> SpaceID {
        if column.isEmpty { return .personal }
        guard let space = SpaceID(column) else { throw .corrupt(table: table, key: key, reason: "\"\(column.prefix(80))\" is not a space id") }
        return space
    }

    // MARK: Field lists

    static func encodeFields(_ fields: [String: FieldValue]) -> [UInt8] {
        var writer = ByteWriter(capacity: 64)
        FieldListCodec.encode(fields, into: &writer)
        return writer.bytes
    }

    static func decodeFields(_ bytes: [UInt8], table: String, key: String) throws(StorageError) -> [String: FieldValue] {
        var reader = ByteReader(bytes)
        do throws(ByteReader.Failure) {
            let fields = try FieldListCodec.decode(from: &reader)
            try reader.expectEnd()
            return fields
        } catch {
            throw .corrupt(table: table, key: key, reason: error.description)
        }
    }

    /// A stored model version, refused as corrupt when outside the protocol's
    /// range: the server never writes one, and a client must never receive one.
    static func modelVersion(_ stored: Int64?, table: String, key: String) throws(StorageError) -> Int? {
        guard let stored else { return nil }
        guard stored >= 1, stored <= Int64(ProtocolLimits.maximumModelVersion) else {
            throw .corrupt(table: table, key: key, reason: ProtocolLimits.problem(modelVersion: Int(clamping: stored)) ?? "model version \(stored)")
        }
        return Int(stored)
    }
}

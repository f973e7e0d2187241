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

    func storedRow(kind: String, id: String) throws(StorageError) -> StoredRow? {
        try sql { () throws(SQLiteError) -> StoredRow? in
            try database.withStatement("select owner, fields, updated_at, deleted_at, created_by, model_version from rows where kind = ?1 and id = ?2") {
                statement throws(SQLiteError) in
                statement.bind(1, kind)
                statement.bind(2, id)
                guard try statement.step() else { return nil }
                return (statement.text(0), statement.bytes(1), statement.int64(2), statement.optionalInt64(3), statement.optionalText(4),
                        statement.optionalInt64(5))
            }
        }
    }

    /// Inserts or replaces a row whose fields are already encoded.
    func writeRow(kind: String, id: String, owner: String, fields: [UInt8], updatedAt: Int64, deletedAt: Int64?,
                  createdBy: String?, modelVersion: Int?) throws(StorageError) {
        try sql { () throws(SQLiteError) in
            try database.withStatement("""
                insert into rows (kind, id, owner, fields, updated_at, deleted_at, created_by, model_version)
                values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                on conflict (kind, id) do update set owner = excluded.owner, fields = excluded.fields,
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
                _ = try statement.step()
            }
        }
    }

    func row(kind: String, id: String) throws(StorageError) -> OwnedRow? {
        guard let found = try storedRow(kind: kind, id: id) else { return nil }
        let fields = try Self.decodeFields(found.fields, table: "rows", key: "\(kind)/\(id)")
        let modelVersion = try Self.modelVersion(found.modelVersion, table: "rows", key: "\(kind)/\(id)")
        return OwnedRow(row: ServerRow(kind: kind, id: id, fields: fields, updatedAt: found.updatedAt, deletedAt: found.deletedAt,
                                       modelVersion: modelVersion),
                        owner: found.owner, createdBy: found.createdBy)
    }

    func write(_ row: ServerRow, owner: String, createdBy: String?) throws(StorageError) {
        try writeRow(kind: row.kind, id: row.id, owner: owner, fields: Self.encodeFields(row.fields), updatedAt: row.updatedAt,
                     deletedAt: row.deletedAt, createdBy: createdBy, modelVersion: row.modelVersion)
    }

    /// Up to `limit` rows of `owner` and `kind` after `cursor`, in `(updated_at, id)` order.
    func rows(owner: String, kind: String, after cursor: PullCursor?, limit: Int) throws(StorageError) -> [ServerRow] {
        let query = cursor == nil
            ? "select id, fields, updated_at, deleted_at, model_version from rows where kind = ?1 and owner = ?2 order by updated_at, id limit ?3"
            : """
              select id, fields, updated_at, deleted_at, model_version from rows
              where kind = ?1 and owner = ?2 and (updated_at, id) > (?4, ?5) order by updated_at, id limit ?3
              """
        let found: [(id: String, fields: [UInt8], updatedAt: Int64, deletedAt: Int64?, modelVersion: Int64?)] = try sql { () throws(SQLiteError) in
            try database.withStatement(query) { statement throws(SQLiteError) in
                statement.bind(1, kind)
                statement.bind(2, owner)
                statement.bind(3, Int64(limit))
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
                                  modelVersion: modelVersion))
        }
        return rows
    }

    // MARK: Remembered operations

    /// A remembered operation's row as stored, its fields still the stored bytes.
    typealias StoredOperation = (kind: String, id: String, fields: [UInt8], updatedAt: Int64, deletedAt: Int64?, modelVersion: Int64?)

    func storedOperation(owner: String, operationID: OperationID) throws(StorageError) -> StoredOperation? {
        try sql { () throws(SQLiteError) -> StoredOperation? in
            try database.withStatement("""
                select kind, id, fields, updated_at, deleted_at, model_version from operations where owner = ?1 and operation_id = ?2
                """) { statement throws(SQLiteError) in
                statement.bind(1, owner)
                statement.bind(2, operationID.description)
                guard try statement.step() else { return nil }
                return (statement.text(0), statement.text(1), statement.bytes(2), statement.int64(3), statement.optionalInt64(4),
                        statement.optionalInt64(5))
            }
        }
    }

    /// Remembers an operation's result row whose fields are already encoded.
    func insertOperation(owner: String, operationID: OperationID, kind: String, id: String, fields: [UInt8], updatedAt: Int64,
                         deletedAt: Int64?, modelVersion: Int?, at rememberedAt: Int64) throws(StorageError) {
        try sql { () throws(SQLiteError) in
            try database.withStatement("""
                insert into operations (owner, operation_id, kind, id, fields, updated_at, deleted_at, remembered_at, model_version)
                values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
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
                         modelVersion: modelVersion)
    }

    func remember(owner: String, operationID: OperationID, row: ServerRow, at rememberedAt: Int64) throws(StorageError) {
        try insertOperation(owner: owner, operationID: operationID, kind: row.kind, id: row.id, fields: Self.encodeFields(row.fields),
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

    func horizon(kind: String) throws(StorageError) -> PullCursor? {
        try sql { () throws(SQLiteError) in
            try database.withStatement("select updated_at, id from horizons where kind = ?1") { statement throws(SQLiteError) in
                statement.bind(1, kind)
                return try statement.step() ? PullCursor(updatedAt: statement.int64(0), id: statement.text(1)) : nil
            }
        }
    }

    func setHorizon(kind: String, _ position: PullCursor) throws(StorageError) {
        try sql { () throws(SQLiteError) in
            try database.withStatement("""
                insert into horizons (kind, updated_at, id) values (?1, ?2, ?3)
                on conflict (kind) do update set updated_at = excluded.updated_at, id = excluded.id
                """) { statement throws(SQLiteError) in
                statement.bind(1, kind)
                statement.bind(2, position.updatedAt)
                statement.bind(3, position.id)
                _ = try statement.step()
            }
        }
    }

    /// The tombstones stamped before `stamp` (of `kind`, or all), as positions per kind.
    func tombstones(before stamp: Int64, kind: String?) throws(StorageError) -> [(kind: String, position: PullCursor)] {
        try sql { () throws(SQLiteError) in
            try database.withStatement("""
                select kind, id, updated_at from rows
                where deleted_at is not null and updated_at < ?1 and (?2 is null or kind = ?2)
                """) { statement throws(SQLiteError) in
                statement.bind(1, stamp)
                if let kind { statement.bind(2, kind) }
                var found: [(kind: String, position: PullCursor)] = []
                while try statement.step() {
                    found.append((statement.text(0), PullCursor(updatedAt: statement.int64(2), id: statement.text(1))))
                }
                return found
            }
        }
    }

    func deleteRow(kind: String, id: String) throws(StorageError) {
        try sql { () throws(SQLiteError) in
            try database.withStatement("delete from rows where kind = ?1 and id = ?2") { statement throws(SQLiteError) in
                statement.bind(1, kind)
                statement.bind(2, id)
                _ = try statement.step()
            }
        }
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

import SyncJournalProtocol
import SyncJournalWire

/// SQLite's row and operation statements with the fields kept as stored:
/// the bytes read are checked and carried, never decoded into values, and
/// the bytes written are a pushed list's own (no second encoding).
extension StorageTransaction: EncodedStorageQueries {
    func encodedRow(kind: String, id: String) throws(StorageError) -> (row: EncodedRow, owner: String, createdBy: String?)? {
        let found: (owner: String, fields: [UInt8], updatedAt: Int64, deletedAt: Int64?, createdBy: String?, modelVersion: Int64?)? = try sql {
            () throws(SQLiteError) in
            try database.withStatement("select owner, fields, updated_at, deleted_at, created_by, model_version from rows where kind = ?1 and id = ?2") {
                statement throws(SQLiteError) in
                statement.bind(1, kind)
                statement.bind(2, id)
                guard try statement.step() else { return nil }
                return (statement.text(0), statement.bytes(1), statement.int64(2), statement.optionalInt64(3), statement.optionalText(4),
                        statement.optionalInt64(5))
            }
        }
        guard let found else { return nil }
        let fields = try Self.encodedFields(found.fields, table: "rows", key: "\(kind)/\(id)")
        let modelVersion = try Self.modelVersion(found.modelVersion, table: "rows", key: "\(kind)/\(id)")
        return (EncodedRow(kind: kind, id: id, fields: fields, updatedAt: found.updatedAt, deletedAt: found.deletedAt, modelVersion: modelVersion),
                found.owner, found.createdBy)
    }

    func write(_ row: EncodedRow, owner: String, createdBy: String?) throws(StorageError) {
        try sql { () throws(SQLiteError) in
            try database.withStatement("""
                insert into rows (kind, id, owner, fields, updated_at, deleted_at, created_by, model_version)
                values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                on conflict (kind, id) do update set owner = excluded.owner, fields = excluded.fields,
                  updated_at = excluded.updated_at, deleted_at = excluded.deleted_at, created_by = excluded.created_by,
                  model_version = excluded.model_version
                """) { statement throws(SQLiteError) in
                statement.bind(1, row.kind)
                statement.bind(2, row.id)
                statement.bind(3, owner)
                statement.bind(4, bytes: row.fields.bytes)
                statement.bind(5, row.updatedAt)
                statement.bind(6, row.deletedAt)
                statement.bind(7, createdBy)
                statement.bind(8, row.modelVersion.map(Int64.init))
                _ = try statement.step()
            }
        }
    }

    func rememberedEncoded(owner: String, operationID: OperationID) throws(StorageError) -> EncodedRow? {
        let key = operationID.description
        let found: (kind: String, id: String, fields: [UInt8], updatedAt: Int64, deletedAt: Int64?, modelVersion: Int64?)? = try sql {
            () throws(SQLiteError) in
            try database.withStatement("""
                select kind, id, fields, updated_at, deleted_at, model_version from operations where owner = ?1 and operation_id = ?2
                """) { statement throws(SQLiteError) in
                statement.bind(1, owner)
                statement.bind(2, key)
                guard try statement.step() else { return nil }
                return (statement.text(0), statement.text(1), statement.bytes(2), statement.int64(3), statement.optionalInt64(4),
                        statement.optionalInt64(5))
            }
        }
        guard let found else { return nil }
        let fields = try Self.encodedFields(found.fields, table: "operations", key: "\(owner)/\(key)")
        let modelVersion = try Self.modelVersion(found.modelVersion, table: "operations", key: "\(owner)/\(key)")
        return EncodedRow(kind: found.kind, id: found.id, fields: fields, updatedAt: found.updatedAt, deletedAt: found.deletedAt,
                          modelVersion: modelVersion)
    }

    func remember(owner: String, operationID: OperationID, row: EncodedRow, at rememberedAt: Int64) throws(StorageError) {
        try sql { () throws(SQLiteError) in
            try database.withStatement("""
                insert into operations (owner, operation_id, kind, id, fields, updated_at, deleted_at, remembered_at, model_version)
                values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                """) { statement throws(SQLiteError) in
                statement.bind(1, owner)
                statement.bind(2, operationID.description)
                statement.bind(3, row.kind)
                statement.bind(4, row.id)
                statement.bind(5, bytes: row.fields.bytes)
                statement.bind(6, row.updatedAt)
                statement.bind(7, row.deletedAt)
                statement.bind(8, rememberedAt)
                statement.bind(9, row.modelVersion.map(Int64.init))
                _ = try statement.step()
            }
        }
    }

    /// A stored field list, checked as ``decodeFields(_:table:key:)`` checks it, kept encoded.
    static func encodedFields(_ bytes: [UInt8], table: String, key: String) throws(StorageError) -> EncodedFields {
        do throws(EncodedFieldsFailure) {
            return try EncodedFields(list: bytes)
        } catch {
            throw .corrupt(table: table, key: key, reason: error.description)
        }
    }
}

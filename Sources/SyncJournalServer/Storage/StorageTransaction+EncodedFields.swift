import SyncJournalProtocol
import SyncJournalWire

/// SQLite's row and operation statements with the fields kept as stored:
/// the bytes read are checked and carried, never decoded into values, and
/// the bytes written are a pushed list's own (no second encoding).
extension StorageTransaction: EncodedStorageQueries {
    func encodedRow(_ key: RecordKey, owner: String) throws(StorageError) -> (row: EncodedRow, createdBy: String?)? {
        guard let found = try storedRow(key, owner: owner) else { return nil }
        let fields = try Self.encodedFields(found.fields, table: "rows", key: key.description)
        let modelVersion = try Self.modelVersion(found.modelVersion, table: "rows", key: key.description)
        return (EncodedRow(kind: key.kind, id: key.id, fields: fields, updatedAt: found.updatedAt, deletedAt: found.deletedAt,
                           modelVersion: modelVersion, space: key.space),
                found.createdBy)
    }

    func write(_ row: EncodedRow, in space: SpaceID, owner: String, createdBy: String?) throws(StorageError) {
        try writeRow(space: space, kind: row.kind, id: row.id, owner: owner, fields: row.fields.bytes, updatedAt: row.updatedAt,
                     deletedAt: row.deletedAt, createdBy: createdBy, modelVersion: row.modelVersion)
    }

    func rememberedEncoded(owner: String, operationID: OperationID) throws(StorageError) -> EncodedRow? {
        guard let found = try storedOperation(owner: owner, operationID: operationID) else { return nil }
        let key = "\(owner)/\(operationID.description)"
        let fields = try Self.encodedFields(found.fields, table: "operations", key: key)
        let modelVersion = try Self.modelVersion(found.modelVersion, table: "operations", key: key)
        return EncodedRow(kind: found.kind, id: found.id, fields: fields, updatedAt: found.updatedAt, deletedAt: found.deletedAt,
                          modelVersion: modelVersion, space: try Self.space(found.space, table: "operations", key: key))
    }

    func remember(owner: String, operationID: OperationID, row: EncodedRow, in space: SpaceID, at rememberedAt: Int64) throws(StorageError) {
        try insertOperation(owner: owner, operationID: operationID, space: space, kind: row.kind, id: row.id, fields: row.fields.bytes,
                            updatedAt: row.updatedAt, deletedAt: row.deletedAt, modelVersion: row.modelVersion, at: rememberedAt)
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

import SyncJournalCore

/// A record as the server last reported it: its fields and the server's
/// stamps. A row with ``deletedAt`` is a tombstone.
public struct ServerRow: Sendable, Hashable {
    /// The entity kind.
    public var kind: String
    /// The record id.
    public var id: String
    /// All fields of the server's copy (empty for a tombstone).
    public var fields: [String: FieldValue]
    /// The server's stamp of this version; only the server issues these.
    public var updatedAt: Int64
    /// When the server deleted the record, for a tombstone.
    public var deletedAt: Int64?

    /// Creates a row.
    public init(kind: String, id: String, fields: [String: FieldValue] = [:], updatedAt: Int64, deletedAt: Int64? = nil) {
        self.kind = kind
        self.id = id
        self.fields = fields
        self.updatedAt = updatedAt
        self.deletedAt = deletedAt
    }

    /// The row's key.
    public var key: RecordKey { RecordKey(kind: kind, id: id) }

    /// Whether this row says the record was deleted.
    public var isTombstone: Bool { deletedAt != nil }

    /// Appends the row's encoding (`journals/FORMAT.md`, "Server row").
    package func encode(into writer: inout ByteWriter) {
        writer.writeString(kind)
        writer.writeString(id)
        writer.writeZigzag(updatedAt)
        writer.writeUInt8(deletedAt == nil ? 0 : 1)
        if let deletedAt { writer.writeZigzag(deletedAt) }
        FieldListCodec.encode(fields, into: &writer)
    }

    /// Reads one encoded row.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> ServerRow {
        let kindAt = reader.position
        let kind = try reader.readString()
        if kind.isEmpty { throw .invalid("empty kind", at: kindAt) }
        let idAt = reader.position
        let id = try reader.readString()
        if id.utf8.isEmpty || id.utf8.count > JournalOperation.maximumRecordIDLength { throw .invalid("record id of \(id.utf8.count) bytes", at: idAt) }
        let updatedAt = try reader.readZigzag()
        let flagsAt = reader.position
        let flags = try reader.readUInt8()
        if flags & ~1 != 0 { throw .invalid("unknown row flags", at: flagsAt) }
        let deletedAt: Int64? = flags & 1 != 0 ? try reader.readZigzag() : nil
        let fields = try FieldListCodec.decode(from: &reader)
        return ServerRow(kind: kind, id: id, fields: fields, updatedAt: updatedAt, deletedAt: deletedAt)
    }
}

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
    /// The highest model version (`SyncRecord.schemaVersion`) that ever wrote
    /// the record, 1 to 65,535, kept on its
    /// tombstone; `nil` when no write stated one. A device whose own version
    /// is lower can tell that a newer version of the app has touched it.
    public var modelVersion: Int?
    /// The space the record lives in.
    public var space: SpaceID

    /// Creates a row.
    public init(kind: String, id: String, fields: [String: FieldValue] = [:], updatedAt: Int64, deletedAt: Int64? = nil,
                modelVersion: Int? = nil, space: SpaceID = .personal) {
        self.kind = kind
        self.id = id
        self.fields = fields
        self.updatedAt = updatedAt
        self.deletedAt = deletedAt
        self.modelVersion = modelVersion
        self.space = space
    }

    /// The row's key.
    public var key: RecordKey { RecordKey(kind: kind, id: id, space: space) }

    /// Whether this row says the record was deleted.
    public var isTombstone: Bool { deletedAt != nil }
}

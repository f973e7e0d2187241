/// One queued operation as it is pushed: the operation id is its idempotency
/// key, so the server can answer a resend with its first result.
public struct Mutation: Sendable, Hashable {
    /// The operation id.
    public var operationID: OperationID
    /// The entity kind.
    public var kind: String
    /// Create, update or delete.
    public var op: OperationKind
    /// The record id.
    public var recordID: String
    /// All fields (create) or the changed ones (update).
    public var fields: [String: FieldValue]
    /// The server stamp the device edited, `nil` for a record the server has not confirmed.
    public var baseUpdatedAt: Int64?
    /// When the device queued the edit, in milliseconds since 1970 by the
    /// device's clock; `nil` from a client that does not say. A server that
    /// forgets operation ids after a retention judges a mutation it no longer
    /// remembers by it (journals/PROTOCOL.md, "Remembered operations").
    public var queuedAt: Int64?
    /// The model version (`SyncRecord.schemaVersion`) of the app that made
    /// the edit, 1 to 65,535; `nil` when not
    /// stated. The server keeps the highest on the record (``ServerRow/modelVersion``).
    public var modelVersion: Int?
    /// The space of the record (journals/PROTOCOL.md, "Spaces").
    public var space: SpaceID

    /// Creates a mutation.
    public init(operationID: OperationID, kind: String, op: OperationKind, recordID: String,
                fields: [String: FieldValue], baseUpdatedAt: Int64?, queuedAt: Int64? = nil, modelVersion: Int? = nil,
                space: SpaceID = .personal) {
        self.operationID = operationID
        self.kind = kind
        self.op = op
        self.recordID = recordID
        self.fields = fields
        self.baseUpdatedAt = baseUpdatedAt
        self.queuedAt = queuedAt
        self.modelVersion = modelVersion
        self.space = space
    }

    /// The record the mutation is about.
    public var key: RecordKey { RecordKey(kind: kind, id: recordID, space: space) }
}

import SyncJournalStore

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

    /// Creates a mutation.
    public init(operationID: OperationID, kind: String, op: OperationKind, recordID: String,
                fields: [String: FieldValue], baseUpdatedAt: Int64?) {
        self.operationID = operationID
        self.kind = kind
        self.op = op
        self.recordID = recordID
        self.fields = fields
        self.baseUpdatedAt = baseUpdatedAt
    }

    /// The mutation that pushes `operation`.
    public init(_ operation: JournalOperation) {
        self.init(operationID: operation.id, kind: operation.entity, op: operation.kind, recordID: operation.recordID,
                  fields: operation.fields, baseUpdatedAt: operation.baseUpdatedAt)
    }
}

/// What the server did with one mutation.
public enum MutationOutcome: Sendable, Hashable {
    /// Applied; `row` is the server's copy afterwards with its new stamp (a tombstone for a delete).
    case applied(ServerRow)
    /// Refused because the server's copy changed since the base; `server` is
    /// its current copy, `nil` if it was deleted.
    case conflict(server: ServerRow?)
    /// Refused; a permanent rejection will never succeed, a transient one may.
    case rejected(reason: String, permanent: Bool)
    /// A create whose id already exists, from a server that does not
    /// remember operation ids (an insert that ignores duplicates). The engine
    /// reads the row back: only a readable row confirms it.
    case duplicate
    /// An update or delete that matched no row, from a server that does not
    /// say why: the row changed, was deleted, or is not visible to this user.
    /// The engine reads it back to tell a conflict from a lost row.
    case noMatch
}

/// The server's answer for one mutation of a push.
public struct MutationResult: Sendable, Hashable {
    /// The mutation's operation id.
    public var operationID: OperationID
    /// What happened.
    public var outcome: MutationOutcome

    /// Creates a result.
    public init(operationID: OperationID, outcome: MutationOutcome) {
        self.operationID = operationID
        self.outcome = outcome
    }
}

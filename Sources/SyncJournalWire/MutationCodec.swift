import SyncJournalProtocol

/// The JSON of one pushed ``Mutation``: `{"operationId", "kind", "op",
/// "recordId", "baseUpdatedAt", "fields"}`, every member present, and
/// `"queuedAt"` (an integer) when the mutation has one: a client that does
/// not know it leaves it out, and a server that does not know it refuses it
/// (see `HTTPTransport`, which then pushes without it). `"modelVersion"`
/// (an integer, 1 to ``ProtocolLimits/maximumModelVersion``) likewise, when
/// the edit states one. `"space"` (a shared space's id, lowercase
/// `8-4-4-4-12` hex) names the record's space; without it the record is in
/// the personal space, as for a client that knows nothing of spaces.
///
/// ```swift
/// let json = MutationCodec.encode(mutation)
/// let again = try MutationCodec.decode(json, at: "$.mutations[0]")
/// ```
public enum MutationCodec {
    static let members: Set<String> = ["operationId", "kind", "op", "recordId", "baseUpdatedAt", "fields", "queuedAt", "modelVersion", "space"]

    /// The mutation's JSON; `includingQueuedAt: false` leaves `queuedAt`
    /// out and `includingModelVersion: false` leaves `modelVersion` out, for
    /// a server older than the member.
    public static func encode(_ mutation: Mutation, includingQueuedAt: Bool = true, includingModelVersion: Bool = true) -> JSONValue {
        var members: [String: JSONValue] = [
            "operationId": .string(mutation.operationID.description),
            "kind": .string(mutation.kind),
            "op": .string(mutation.op.description),
            "recordId": .string(mutation.recordID),
            "baseUpdatedAt": mutation.baseUpdatedAt.map { .integer($0) } ?? .null,
            "fields": FieldValueCodec.encode(fields: mutation.fields),
        ]
        if includingQueuedAt, let queuedAt = mutation.queuedAt { members["queuedAt"] = .integer(queuedAt) }
        if includingModelVersion, let version = mutation.modelVersion { members["modelVersion"] = .integer(Int64(version)) }
        if let space = mutation.space.text { members["space"] = .string(space) }
        return .object(members)
    }

    /// The mutation `json` (found at `path`) stands for: an operation id in
    /// the `8-4-4-4-12` hex form, a non-empty kind, `op` one of `create`,
    /// `update`, `delete`, a non-empty record id, no fields for a delete,
    /// a `modelVersion`, when present, of 1 to ``ProtocolLimits/maximumModelVersion``,
    /// and a `space`, when present, in lowercase `8-4-4-4-12` hex.
    ///
    /// The sizes of a kind, a record id and its fields are not judged here:
    /// a mutation over ``ProtocolLimits`` is well formed, and the server
    /// rejects it alone (a permanent `rejected` result) while it applies the
    /// rest of its push.
    public static func decode(_ json: JSONValue, at path: String) throws(WireError) -> Mutation {
        let object = try JSONObjectReader(json, at: path, allowed: members)
        return try decode(object) { () throws(WireError) in
            try FieldValueCodec.decodeFields(try object.value("fields"), at: object.path(of: "fields"))
        }
    }

    /// The mutation of `object`, whose fields `readFields` reads when their
    /// turn comes (from the parsed value, or straight from a body's bytes),
    /// so both readers judge the members in one order.
    static func decode(_ object: JSONObjectReader, fields readFields: () throws(WireError) -> [String: FieldValue]) throws(WireError) -> Mutation {
        let operationID = try operationID(object, "operationId")
        let kind = try object.name("kind")
        let opText = try object.string("op")
        guard let op = OperationKind.allCases.first(where: { $0.description == opText }) else {
            throw .invalidValue(path: object.path(of: "op"), reason: "\"\(opText)\" is not create, update or delete")
        }
        let recordID = try object.name("recordId")
        let baseUpdatedAt = try object.optionalInt64("baseUpdatedAt")
        let fields = try readFields()
        if op == .delete && !fields.isEmpty { throw .invalidValue(path: object.path(of: "fields"), reason: "a delete carries no fields") }
        let queuedAt = try object.absentOrInt64("queuedAt")
        return Mutation(operationID: operationID, kind: kind, op: op, recordID: recordID, fields: fields,
                        baseUpdatedAt: baseUpdatedAt, queuedAt: queuedAt, modelVersion: try object.absentOrModelVersion("modelVersion"),
                        space: try object.absentOrSpaceID("space"))
    }

    /// Member `name` of `object` as an operation id, in its one spelling:
    /// lowercase `8-4-4-4-12` hex.
    static func operationID(_ object: JSONObjectReader, _ name: String) throws(WireError) -> OperationID {
        try operationID(try object.string(name), at: object.path(of: name))
    }

    /// `text`, found at `path`, as an operation id in lowercase `8-4-4-4-12`
    /// hex. Any other spelling of the same bytes is refused: a client matches
    /// a result to its operation by comparing the id's text, so an answer
    /// under another spelling than the one sent would never settle it.
    static func operationID(_ text: String, at path: String) throws(WireError) -> OperationID {
        guard let id = OperationID(text) else {
            throw .invalidValue(path: path, reason: "\"\(text)\" is not an operation id (8-4-4-4-12 hex)")
        }
        guard id.description == text else {
            throw .invalidValue(path: path, reason: "\"\(text)\" is not an operation id in lowercase 8-4-4-4-12 hex (ids are compared byte for byte)")
        }
        return id
    }
}

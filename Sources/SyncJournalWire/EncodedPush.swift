import SyncJournalProtocol

/// A pushed mutation whose fields stay in the field codec's encoding
/// (``EncodedFields``): the server's form of a ``Mutation``.
package struct EncodedMutation: Sendable, Hashable {
    /// Everything but the fields, which are empty here.
    package var mutation: Mutation
    /// All fields (create) or the changed ones (update).
    package var fields: EncodedFields

    package init(mutation: Mutation, fields: EncodedFields) {
        var mutation = mutation
        mutation.fields = [:]
        self.mutation = mutation
        self.fields = fields
    }
}

/// A ``ServerRow`` whose fields stay in the field codec's encoding.
package struct EncodedRow: Sendable, Hashable {
    package var kind: String
    package var id: String
    /// All fields of the server's copy (none for a tombstone).
    package var fields: EncodedFields
    package var updatedAt: Int64
    package var deletedAt: Int64?
    package var modelVersion: Int?
    /// The space the record lives in.
    package var space: SpaceID

    package init(kind: String, id: String, fields: EncodedFields = EncodedFields(), updatedAt: Int64, deletedAt: Int64? = nil,
                 modelVersion: Int? = nil, space: SpaceID = .personal) {
        self.kind = kind
        self.id = id
        self.fields = fields
        self.updatedAt = updatedAt
        self.deletedAt = deletedAt
        self.modelVersion = modelVersion
        self.space = space
    }

    /// Whether this row says the record was deleted.
    package var isTombstone: Bool { deletedAt != nil }

    /// The row with its fields built as values.
    package var decoded: ServerRow {
        ServerRow(kind: kind, id: id, fields: fields.decoded(), updatedAt: updatedAt, deletedAt: deletedAt, modelVersion: modelVersion,
                  space: space)
    }
}

/// A ``MutationOutcome`` whose rows stay encoded.
package enum EncodedOutcome: Sendable, Hashable {
    case applied(EncodedRow)
    case conflict(server: EncodedRow?)
    case rejected(reason: String, permanent: Bool)
    case duplicate
    case noMatch

    /// The outcome with its rows' fields built as values.
    package var decoded: MutationOutcome {
        switch self {
        case .applied(let row): return .applied(row.decoded)
        case .conflict(let server): return .conflict(server: server?.decoded)
        case .rejected(let reason, let permanent): return .rejected(reason: reason, permanent: permanent)
        case .duplicate: return .duplicate
        case .noMatch: return .noMatch
        }
    }
}

/// A ``MutationResult`` whose rows stay encoded.
package struct EncodedMutationResult: Sendable, Hashable {
    package var operationID: OperationID
    package var outcome: EncodedOutcome

    package init(operationID: OperationID, outcome: EncodedOutcome) {
        self.operationID = operationID
        self.outcome = outcome
    }

    /// The result with its rows' fields built as values.
    package var decoded: MutationResult { MutationResult(operationID: operationID, outcome: outcome.decoded) }
}

extension PushRequestCodec {
    /// The mutations of a request body, as ``decode(_:parser:)`` reads them
    /// and with the same errors, but each one's fields turned straight from
    /// the body's bytes into the field codec's encoding: the server stores
    /// them so, and no ``FieldValue`` is built on the way.
    package static func decodeEncoded(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> [EncodedMutation] {
        try decode(body, parser: parser) { (scanner: inout JSONScanner, path: String) throws(WireError) -> EncodedMutation in
            var fields = EncodedFields()
            let mutation = try scanner.decodeMutation(at: path) { (scanner: inout JSONScanner, fieldsPath: String) throws(WireError) in
                fields = try scanner.transcodeFields(path: { fieldsPath })
                // A stand-in, empty exactly when the fields are: the mutation's
                // checks (a delete carries none) see what the decoder would.
                return fields.count == 0 ? [:] : ["": .null]
            }
            return EncodedMutation(mutation: mutation, fields: fields)
        }
    }
}

extension PushReplyCodec {
    /// The reply body for results whose rows stay encoded: the same bytes
    /// as ``encode(_:includingModelVersions:)`` for the same rows built as
    /// values. The reply is measured first and written into an array of
    /// its exact size (it echoes every applied row, so it is about as large
    /// as its push).
    package static func encode(encoded results: [EncodedMutationResult], includingModelVersions: Bool = true) -> [UInt8] {
        var counter = ByteCounter()
        write(results, includingModelVersions: includingModelVersions, to: &counter)
        var out: [UInt8] = []
        out.reserveCapacity(counter.count)
        write(results, includingModelVersions: includingModelVersions, to: &out)
        return out
    }

    private static func write<Sink: ByteSink>(_ results: [EncodedMutationResult], includingModelVersions: Bool, to out: inout Sink) {
        out.append(contentsOf: #"{"results":["#.utf8)
        for (index, result) in results.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            write(result, includingModelVersions: includingModelVersions, to: &out)
        }
        out.append(contentsOf: "]}".utf8)
    }

    /// One result, as `MutationResultCodec.write(_:includingModelVersions:to:)` writes it.
    private static func write<Sink: ByteSink>(_ result: EncodedMutationResult, includingModelVersions: Bool, to out: inout Sink) {
        out.append(contentsOf: #"{"operationId":"#.utf8)
        JSONValue.writeString(result.operationID.description, to: &out)
        let status: String
        switch result.outcome {
        case .applied(let row):
            out.append(contentsOf: #","row":"#.utf8)
            write(row, includingModelVersion: includingModelVersions, to: &out)
            status = "applied"
        case .conflict(let server):
            out.append(contentsOf: #","server":"#.utf8)
            write(server, includingModelVersion: includingModelVersions, to: &out)
            status = "conflict"
        case .rejected(let reason, let permanent):
            out.append(contentsOf: #","permanent":"#.utf8)
            out.append(contentsOf: (permanent ? "true" : "false").utf8)
            out.append(contentsOf: #","reason":"#.utf8)
            JSONValue.writeString(reason, to: &out)
            status = "rejected"
        case .duplicate:
            status = "duplicate"
        case .noMatch:
            status = "noMatch"
        }
        out.append(contentsOf: #","status":"#.utf8)
        JSONValue.writeString(status, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// One row or `null`, as `ServerRowCodec.write(_:includingModelVersion:to:)` writes it.
    private static func write<Sink: ByteSink>(_ row: EncodedRow?, includingModelVersion: Bool, to out: inout Sink) {
        guard let row else {
            out.append(contentsOf: "null".utf8)
            return
        }
        out.append(contentsOf: #"{"deletedAt":"#.utf8)
        if let deletedAt = row.deletedAt { JSONValue.writeInteger(deletedAt, to: &out) } else { out.append(contentsOf: "null".utf8) }
        out.append(contentsOf: #","fields":"#.utf8)
        row.fields.writeJSON(to: &out)
        out.append(contentsOf: #","id":"#.utf8)
        JSONValue.writeString(row.id, to: &out)
        out.append(contentsOf: #","kind":"#.utf8)
        JSONValue.writeString(row.kind, to: &out)
        if includingModelVersion, let version = row.modelVersion {
            out.append(contentsOf: #","modelVersion":"#.utf8)
            JSONValue.writeInteger(Int64(version), to: &out)
        }
        if let space = row.space.text {
            out.append(contentsOf: #","space":"#.utf8)
            JSONValue.writeString(space, to: &out)
        }
        out.append(contentsOf: #","updatedAt":"#.utf8)
        JSONValue.writeInteger(row.updatedAt, to: &out)
        out.append(UInt8(ascii: "}"))
    }
}

import SyncJournalProtocol

/// The JSON of one ``MutationResult``: `operationId`, `status` and the
/// status's own members (`journals/PROTOCOL.md`, "Push"):
///
/// | status | members |
/// |---|---|
/// | `applied` | `row` |
/// | `conflict` | `server` (a row or `null`) |
/// | `rejected` | `reason`, `permanent` |
/// | `duplicate`, `noMatch` | — |
///
/// ```swift
/// let json = MutationResultCodec.encode(MutationResult(operationID: id, outcome: .conflict(server: nil)))
/// ```
public enum MutationResultCodec {
    /// The result's JSON; `includingModelVersions: false` leaves the rows'
    /// `modelVersion` out (``ServerRowCodec/encode(_:includingModelVersion:)``).
    public static func encode(_ result: MutationResult, includingModelVersions: Bool = true) -> JSONValue {
        var members: [String: JSONValue] = ["operationId": .string(result.operationID.description)]
        switch result.outcome {
        case .applied(let row):
            members["status"] = .string("applied")
            members["row"] = ServerRowCodec.encode(row, includingModelVersion: includingModelVersions)
        case .conflict(let server):
            members["status"] = .string("conflict")
            members["server"] = ServerRowCodec.encode(optional: server, includingModelVersion: includingModelVersions)
        case .rejected(let reason, let permanent):
            members["status"] = .string("rejected")
            members["reason"] = .string(reason)
            members["permanent"] = .bool(permanent)
        case .duplicate:
            members["status"] = .string("duplicate")
        case .noMatch:
            members["status"] = .string("noMatch")
        }
        return .object(members)
    }

    /// The result `json` (found at `path`) stands for.
    public static func decode(_ json: JSONValue, at path: String) throws(WireError) -> MutationResult {
        // The status decides which other members are allowed: read it first.
        let loose = try JSONObjectReader(json, at: path, allowed: ["operationId", "status", "row", "server", "reason", "permanent"])
        let status = try loose.string("status")
        let own: Set<String>
        switch status {
        case "applied": own = ["row"]
        case "conflict": own = ["server"]
        case "rejected": own = ["reason", "permanent"]
        case "duplicate", "noMatch": own = []
        default:
            throw .invalidValue(path: loose.path(of: "status"), reason: "\"\(status)\" is not applied, conflict, rejected, duplicate or noMatch")
        }
        let object = try JSONObjectReader(json, at: path, allowed: own.union(["operationId", "status"]))
        let operationID = try MutationCodec.operationID(object, "operationId")
        let outcome: MutationOutcome
        switch status {
        case "applied": outcome = .applied(try ServerRowCodec.decode(try object.value("row"), at: object.path(of: "row")))
        case "conflict": outcome = .conflict(server: try ServerRowCodec.decode(optional: try object.value("server"), at: object.path(of: "server")))
        case "rejected": outcome = .rejected(reason: try object.string("reason"), permanent: try object.bool("permanent"))
        case "duplicate": outcome = .duplicate
        default: outcome = .noMatch
        }
        return MutationResult(operationID: operationID, outcome: outcome)
    }
}

import SyncJournalProtocol

/// Results written straight to bytes: exactly what ``MutationResultCodec/encode(_:includingModelVersions:)``
/// then ``JSONValue/encoded()`` give (members in UTF-8 byte order), without the JSON tree.
extension MutationResultCodec {
    /// Appends the result's JSON.
    static func write(_ result: MutationResult, includingModelVersions: Bool, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"operationId":"#.utf8)
        JSONValue.writeString(result.operationID.description, to: &out)
        let status: String
        switch result.outcome {
        case .applied(let row):
            out.append(contentsOf: #","row":"#.utf8)
            ServerRowCodec.write(row, includingModelVersion: includingModelVersions, to: &out)
            status = "applied"
        case .conflict(let server):
            out.append(contentsOf: #","server":"#.utf8)
            ServerRowCodec.write(server, includingModelVersion: includingModelVersions, to: &out)
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
}

import SyncJournalProtocol

/// The body of `POST /v1/sync/read`: `{"kind": KIND, "id": ID}`.
///
/// ```swift
/// let body = ReadRequestCodec.encode(ReadRequest(kind: "pin", id: "p1"))
/// let request = try ReadRequestCodec.decode(body)
/// ```
public enum ReadRequestCodec {
    /// The request body.
    public static func encode(_ request: ReadRequest) -> [UInt8] {
        JSONValue.object(["kind": .string(request.kind), "id": .string(request.id)]).encoded()
    }

    /// The request a body stands for: a non-empty kind, an id of 1 to 64 UTF-8 bytes.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> ReadRequest {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["kind", "id"])
        return ReadRequest(kind: try object.name("kind"), id: try object.name("id", maximumBytes: ProtocolLimits.maximumRecordIDBytes))
    }
}

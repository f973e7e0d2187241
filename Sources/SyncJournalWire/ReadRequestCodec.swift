import SyncJournalProtocol

/// The body of `POST /v1/sync/read`: `{"kind": KIND, "id": ID}`, plus
/// `"space": SPACEID` for a record of a shared space (journals/PROTOCOL.md,
/// "Membership").
///
/// ```swift
/// let body = ReadRequestCodec.encode(ReadRequest(kind: "pin", id: "p1"))
/// let request = try ReadRequestCodec.decode(body)
/// ```
public enum ReadRequestCodec {
    /// The request body; a personal record's has no `space`, exactly as
    /// before spaces.
    public static func encode(_ request: ReadRequest) -> [UInt8] {
        var members: [String: JSONValue] = ["kind": .string(request.kind), "id": .string(request.id)]
        if let space = request.space.text { members["space"] = .string(space) }
        return JSONValue.object(members).encoded()
    }

    /// The request a body stands for: a non-empty kind, an id of 1 to 64
    /// UTF-8 bytes, a `space`, when present, in lowercase `8-4-4-4-12` hex.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> ReadRequest {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["kind", "id", "space"])
        return ReadRequest(kind: try object.name("kind"), id: try object.name("id", maximumBytes: ProtocolLimits.maximumRecordIDBytes),
                           space: try object.absentOrSpaceID("space"))
    }
}

/// The 200 body of `GET /v1/health`: `{"status": "ok"}`.
///
/// ```swift
/// let body = HealthReplyCodec.encode()                 // the server
/// let status = try HealthReplyCodec.decode(body)       // "ok"
/// ```
public enum HealthReplyCodec {
    /// The status a healthy server reports.
    public static let ok = "ok"

    /// The reply body.
    public static func encode(status: String = HealthReplyCodec.ok) -> [UInt8] {
        JSONValue.object(["status": .string(status)]).encoded()
    }

    /// The status of a reply body.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> String {
        try JSONObjectReader.body(body, parser: parser, allowed: ["status"]).string("status")
    }
}

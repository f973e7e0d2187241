/// The 200 body of `POST /v1/sync/wait`: `{"changed": BOOL}` — `true` when
/// this user has rows after one of the wait's cursors (the client pulls
/// next), `false` when the timeout passed first.
///
/// ```swift
/// let body = ChangeWaitReplyCodec.encode(changed: true)    // the server
/// let changed = try ChangeWaitReplyCodec.decode(body)      // true
/// ```
public enum ChangeWaitReplyCodec {
    /// The reply body.
    public static func encode(changed: Bool) -> [UInt8] {
        JSONValue.object(["changed": .bool(changed)]).encoded()
    }

    /// Whether a reply body says the user's rows changed.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> Bool {
        try JSONObjectReader.body(body, parser: parser, allowed: ["changed"]).bool("changed")
    }
}

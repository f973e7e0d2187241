import SyncJournalProtocol

/// The 200 body of `POST /v1/sync/read`: `{"row": ROW or null}`.
///
/// ```swift
/// let body = ReadReplyCodec.encode(row)          // the server; nil for no live row
/// let row = try ReadReplyCodec.decode(body)      // the client
/// ```
public enum ReadReplyCodec {
    /// The reply body; `includingModelVersions: false` leaves the row's
    /// `modelVersion` out, for a client that did not say it reads it.
    public static func encode(_ row: ServerRow?, includingModelVersions: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: #"{"row":"#.utf8)
        ServerRowCodec.write(row, includingModelVersion: includingModelVersions, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The row of a reply body, `nil` for `null`.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> ServerRow? {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["row"])
        return try ServerRowCodec.decode(optional: try object.value("row"), at: object.path(of: "row"))
    }
}

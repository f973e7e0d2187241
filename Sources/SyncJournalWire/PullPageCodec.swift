import SyncJournalProtocol

/// The 200 body of `POST /v1/sync/pull`:
/// `{"rows": [ROW, …], "nextCursors": {KIND: CURSOR, …}, "hasMore": BOOL}`.
///
/// Only the shape is checked here; the sync engine checks the rows against
/// its request (order, kinds, cursor movement).
///
/// ```swift
/// let body = PullPageCodec.encode(page)        // the server
/// let page = try PullPageCodec.decode(body)    // the client
/// ```
public enum PullPageCodec {
    /// The reply body; `includingModelVersions: false` leaves the rows'
    /// `modelVersion` out, for a client that did not say it reads it.
    ///
    /// The rows are written straight to bytes (the same bytes as through
    /// ``JSONValue``), without a JSON value per field value.
    public static func encode(_ page: PullPage, includingModelVersions: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: #"{"hasMore":"#.utf8)
        out.append(contentsOf: (page.hasMore ? "true" : "false").utf8)
        out.append(contentsOf: #","nextCursors":"#.utf8)
        JSONValue.object(page.nextCursors.mapValues { .string(PullCursorCodec.encode($0)) }).write(to: &out)
        out.append(contentsOf: #","rows":["#.utf8)
        for (index, row) in page.rows.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            ServerRowCodec.write(row, includingModelVersion: includingModelVersions, to: &out)
        }
        out.append(contentsOf: "]}".utf8)
        return out
    }

    /// The page a reply body stands for.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> PullPage {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["rows", "nextCursors", "hasMore"])
        let rowsPath = object.path(of: "rows")
        let items = try object.array("rows")
        var rows: [ServerRow] = []
        rows.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            rows.append(try ServerRowCodec.decode(item, at: JSONPath.element(rowsPath, index)))
        }
        let cursorsPath = object.path(of: "nextCursors")
        var nextCursors: [String: PullCursor] = [:]
        for (kind, value) in try object.object("nextCursors") {
            let path = JSONPath.member(cursorsPath, kind)
            if kind.isEmpty { throw .invalidValue(path: path, reason: "an empty kind") }
            guard case .string(let text) = value else { throw .wrongType(path: path, expected: "a cursor string") }
            nextCursors[kind] = try PullCursorCodec.decode(text, at: path)
        }
        return PullPage(rows: rows, nextCursors: nextCursors, hasMore: try object.bool("hasMore"))
    }
}

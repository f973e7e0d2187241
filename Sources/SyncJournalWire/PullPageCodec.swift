import SyncJournalProtocol

/// The 200 body of `POST /v1/sync/pull`:
/// `{"rows": [ROW, …], "nextCursors": {KIND: CURSOR, …}, "hasMore": BOOL}`,
/// and, in reply to a pull that names `spaces` (journals/PROTOCOL.md, "Pull
/// across spaces"), `"nextSpaceCursors": {SPACEID: {KIND: CURSOR, …}, …}`,
/// `"spaces": [SPACE, …]` and `"lostSpaces": [SPACEID, …]`, all three.
///
/// Only the shape is checked here; the sync engine checks the rows against
/// its request (order, kinds, cursor movement).
///
/// ```swift
/// let body = PullPageCodec.encode(page, includingSpaces: request.spaces != nil)   // the server
/// let page = try PullPageCodec.decode(body, namingSpaces: request.spaces != nil)  // the client
/// ```
public enum PullPageCodec {
    /// The members of a reply to a pull that names spaces, beyond the others.
    static let spaceMembers: Set<String> = ["nextSpaceCursors", "spaces", "lostSpaces"]

    /// The reply body; `includingModelVersions: false` leaves the rows'
    /// `modelVersion` out, for a client that did not say it reads it, and
    /// `includingSpaces` writes the space members, for a pull that named
    /// `spaces` (a client that did not would refuse them). A page for such a
    /// client must hold no row of a shared space.
    ///
    /// The rows are written straight to bytes (the same bytes as through
    /// ``JSONValue``), without a JSON value per field value.
    public static func encode(_ page: PullPage, includingModelVersions: Bool = true, includingSpaces: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: #"{"hasMore":"#.utf8)
        out.append(contentsOf: (page.hasMore ? "true" : "false").utf8)
        if includingSpaces {
            out.append(contentsOf: #","lostSpaces":"#.utf8)
            JSONValue.array(page.lostSpaces.sorted(by: <).compactMap { $0.text.map(JSONValue.string) }).write(to: &out)
        }
        out.append(contentsOf: #","nextCursors":"#.utf8)
        cursors(page.nextCursors).write(to: &out)
        if includingSpaces {
            out.append(contentsOf: #","nextSpaceCursors":"#.utf8)
            var spaces: [String: JSONValue] = [:]
            for (space, kinds) in page.nextSpaceCursors {
                guard let id = space.text else { continue }
                spaces[id] = cursors(kinds)
            }
            JSONValue.object(spaces).write(to: &out)
        }
        out.append(contentsOf: #","rows":["#.utf8)
        for (index, row) in page.rows.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            ServerRowCodec.write(row, includingModelVersion: includingModelVersions, to: &out)
        }
        out.append(UInt8(ascii: "]"))
        if includingSpaces {
            out.append(contentsOf: #","spaces":"#.utf8)
            SpaceCodec.encodeList(page.spaces).write(to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The page a reply body stands for. `namingSpaces` says whether the
    /// pull named `spaces`: then the reply carries the three space members
    /// (each required); otherwise it carries none of them and no row of a
    /// shared space, as a server that knows the client does not sync them sends.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    public static func decode(_ body: some Collection<UInt8>, namingSpaces: Bool = false, parser: JSONParser = JSONParser()) throws(WireError) -> PullPage {
        let allowed: Set<String> = namingSpaces ? spaceMembers.union(["rows", "nextCursors", "hasMore"]) : ["rows", "nextCursors", "hasMore"]
        let object = try JSONObjectReader.body(body, parser: parser, allowed: allowed)
        let rowsPath = object.path(of: "rows")
        let items = try object.array("rows")
        var rows: [ServerRow] = []
        rows.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            let path = JSONPath.element(rowsPath, index)
            let row = try ServerRowCodec.decode(item, at: path)
            // A client that does not sync spaces did not say it reads the member.
            if !namingSpaces && !row.space.isPersonal { throw .unknownMember(path: JSONPath.member(path, "space")) }
            rows.append(row)
        }
        let nextCursors = try cursors(try object.value("nextCursors"), at: object.path(of: "nextCursors"))
        var page = PullPage(rows: rows, nextCursors: nextCursors, hasMore: try object.bool("hasMore"))
        guard namingSpaces else { return page }
        let spaceCursorsPath = object.path(of: "nextSpaceCursors")
        for (key, value) in try object.object("nextSpaceCursors") {
            let path = JSONPath.member(spaceCursorsPath, key)
            page.nextSpaceCursors[try JSONObjectReader.spaceID(key, at: path)] = try cursors(value, at: path)
        }
        page.spaces = try SpaceCodec.decodeList(try object.value("spaces"), at: object.path(of: "spaces"))
        let lostPath = object.path(of: "lostSpaces")
        for (index, item) in try object.array("lostSpaces").enumerated() {
            let path = JSONPath.element(lostPath, index)
            guard case .string(let text) = item else { throw .wrongType(path: path, expected: "a space id") }
            page.lostSpaces.append(try JSONObjectReader.spaceID(text, at: path))
        }
        return page
    }

    /// `{KIND: CURSOR, …}`.
    private static func cursors(_ cursors: [String: PullCursor]) -> JSONValue {
        .object(cursors.mapValues { .string(PullCursorCodec.encode($0)) })
    }

    /// The cursors of the object `json` (found at `path`): non-empty kinds, each a cursor string.
    private static func cursors(_ json: JSONValue, at path: String) throws(WireError) -> [String: PullCursor] {
        guard case .object(let members) = json else { throw .wrongType(path: path, expected: "an object") }
        var cursors: [String: PullCursor] = [:]
        for (kind, value) in members {
            let kindPath = JSONPath.member(path, kind)
            if kind.isEmpty { throw .invalidValue(path: kindPath, reason: "an empty kind") }
            guard case .string(let text) = value else { throw .wrongType(path: kindPath, expected: "a cursor string") }
            cursors[kind] = try PullCursorCodec.decode(text, at: kindPath)
        }
        return cursors
    }
}

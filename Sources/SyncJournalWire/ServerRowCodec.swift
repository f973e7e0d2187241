import SyncJournalProtocol

/// The JSON of a ``ServerRow``: `{"kind", "id", "fields", "updatedAt", "deletedAt"}`,
/// every member present (`deletedAt` is `null` for a live row), and
/// `"modelVersion"` (an integer, 1 to ``ProtocolLimits/maximumModelVersion``)
/// when the row has one and the client reads it: a client that does not
/// know the member would refuse the whole reply (journals/PROTOCOL.md, "Model versions").
/// A row of a shared space carries `"space"` (its id); a personal row has
/// none. A server sends shared rows only to a client that says it reads
/// the member (`Sync-Row-Members: space`, journals/PROTOCOL.md, "Membership"),
/// so the member is written whenever the row has a space.
///
/// ```swift
/// let json = ServerRowCodec.encode(ServerRow(kind: "pin", id: "p1", fields: ["grade": .int(7)], updatedAt: 1764000000123))
/// let row = try ServerRowCodec.decode(json, at: "$.row")
/// ```
public enum ServerRowCodec {
    static let members: Set<String> = ["kind", "id", "fields", "updatedAt", "deletedAt", "modelVersion", "space"]

    /// The row's JSON; `includingModelVersion: false` leaves `modelVersion`
    /// out, for a client that did not say it reads it.
    public static func encode(_ row: ServerRow, includingModelVersion: Bool = true) -> JSONValue {
        var members: [String: JSONValue] = [
            "kind": .string(row.kind),
            "id": .string(row.id),
            "fields": FieldValueCodec.encode(fields: row.fields),
            "updatedAt": .integer(row.updatedAt),
            "deletedAt": row.deletedAt.map { .integer($0) } ?? .null,
        ]
        if includingModelVersion, let version = row.modelVersion { members["modelVersion"] = .integer(Int64(version)) }
        if let space = row.space.text { members["space"] = .string(space) }
        return .object(members)
    }

    /// The row `json` (found at `path`) stands for: a non-empty kind, an id
    /// of 1 to 64 UTF-8 bytes, non-empty field names, a `modelVersion`, when
    /// present, of 1 to ``ProtocolLimits/maximumModelVersion``, a `space`,
    /// when present, in lowercase `8-4-4-4-12` hex.
    public static func decode(_ json: JSONValue, at path: String) throws(WireError) -> ServerRow {
        let object = try JSONObjectReader(json, at: path, allowed: members)
        return ServerRow(kind: try object.name("kind"),
                         id: try object.name("id", maximumBytes: ProtocolLimits.maximumRecordIDBytes),
                         fields: try FieldValueCodec.decodeFields(try object.value("fields"), at: object.path(of: "fields")),
                         updatedAt: try object.int64("updatedAt"),
                         deletedAt: try object.optionalInt64("deletedAt"),
                         modelVersion: try object.absentOrModelVersion("modelVersion"),
                         space: try object.absentOrSpaceID("space"))
    }

    /// `null`, or the row's JSON.
    static func encode(optional row: ServerRow?, includingModelVersion: Bool = true) -> JSONValue {
        row.map { encode($0, includingModelVersion: includingModelVersion) } ?? .null
    }

    /// `nil` for `null`, else the row.
    static func decode(optional json: JSONValue, at path: String) throws(WireError) -> ServerRow? {
        if json == .null { return nil }
        return try decode(json, at: path)
    }
}

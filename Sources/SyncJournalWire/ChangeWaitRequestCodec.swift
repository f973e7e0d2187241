import SyncJournalProtocol

/// The body of `POST /v1/sync/wait`:
/// `{"cursors": {KIND: CURSOR or null, …}, "timeoutMs": N}`, plus
/// `"spaces"` (``SpaceCursorsCodec``) for a device that follows shared
/// spaces (journals/PROTOCOL.md, "Pull across spaces", "Waiting").
///
/// ```swift
/// let body = ChangeWaitRequestCodec.encode(ChangeWaitRequest(cursors: ["pin": nil], timeoutMilliseconds: 30_000))
/// let request = try ChangeWaitRequestCodec.decode(body)
/// ```
public enum ChangeWaitRequestCodec {
    /// The most kinds one wait may name (a longer list is a 400).
    public static let maximumKinds = 1_000

    /// The request body; one without ``ChangeWaitRequest/spaces`` has no
    /// `spaces` member, exactly as before spaces.
    public static func encode(_ request: ChangeWaitRequest) -> [UInt8] {
        let cursors = request.cursors.mapValues { cursor -> JSONValue in cursor.map { .string(PullCursorCodec.encode($0)) } ?? .null }
        var members: [String: JSONValue] = [
            "cursors": .object(cursors),
            "timeoutMs": .integer(request.timeoutMilliseconds),
        ]
        if let spaces = request.spaces { members["spaces"] = SpaceCursorsCodec.encode(spaces) }
        return JSONValue.object(members).encoded()
    }

    /// The request a body stands for: 1 to ``maximumKinds`` non-empty kinds,
    /// cursors in the `UPDATEDAT:ID` form or `null`, a timeout of 0 or more
    /// milliseconds (the server caps it), and `spaces`, when present, as
    /// ``SpaceCursorsCodec/decode(_:at:kinds:)`` reads it.
    ///
    /// - Throws: ``WireError``; a malformed cursor is ``WireError/badCursor(path:text:)``.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> ChangeWaitRequest {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["cursors", "timeoutMs", "spaces"])
        let cursorsPath = object.path(of: "cursors")
        let members = try object.object("cursors")
        if members.isEmpty { throw .invalidValue(path: cursorsPath, reason: "no kinds to wait for") }
        if members.count > maximumKinds {
            throw .invalidValue(path: cursorsPath, reason: "\(members.count) kinds, at most \(maximumKinds)")
        }
        var cursors: [String: PullCursor?] = [:]
        for (kind, value) in members {
            let path = JSONPath.member(cursorsPath, kind)
            if kind.isEmpty { throw .invalidValue(path: path, reason: "an empty kind") }
            switch value {
            case .null: cursors[kind] = .some(nil)
            case .string(let text): cursors[kind] = try PullCursorCodec.decode(text, at: path)
            default: throw .wrongType(path: path, expected: "a cursor string or null")
            }
        }
        let timeout = try object.int64("timeoutMs")
        guard timeout >= 0 else {
            throw .invalidValue(path: object.path(of: "timeoutMs"), reason: "\(timeout) is negative")
        }
        var spaces: [SpaceID: SpaceCursors]?
        if let held = object.members["spaces"] {
            spaces = try SpaceCursorsCodec.decode(held, at: object.path(of: "spaces"), kinds: Set(cursors.keys))
        }
        return ChangeWaitRequest(cursors: cursors, timeoutMilliseconds: timeout, spaces: spaces)
    }
}

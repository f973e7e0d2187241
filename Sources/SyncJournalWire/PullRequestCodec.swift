import SyncJournalProtocol

/// The body of `POST /v1/sync/pull`:
/// `{"cursors": {KIND: CURSOR or null, …}, "limit": N, "resync": BOOL}`,
/// plus `"spaces"` (``SpaceCursorsCodec``) when the device syncs shared
/// spaces (journals/PROTOCOL.md, "Pull across spaces").
///
/// ```swift
/// let body = PullRequestCodec.encode(PullRequest(cursors: ["pin": nil], limit: 500))
/// let request = try PullRequestCodec.decode(body)
/// ```
public enum PullRequestCodec {
    /// The largest `limit` the protocol allows.
    public static let maximumLimit = ProtocolLimits.maximumPullLimit

    /// The request body; one without ``PullRequest/spaces`` has no
    /// `spaces` member, exactly as before spaces.
    public static func encode(_ request: PullRequest) -> [UInt8] {
        let cursors = request.cursors.mapValues { cursor -> JSONValue in cursor.map { .string(PullCursorCodec.encode($0)) } ?? .null }
        var members: [String: JSONValue] = [
            "cursors": .object(cursors),
            "limit": .integer(Int64(request.limit)),
            "resync": .bool(request.isResync),
        ]
        if let spaces = request.spaces { members["spaces"] = SpaceCursorsCodec.encode(spaces) }
        return JSONValue.object(members).encoded()
    }

    /// The request a body stands for: at most
    /// ``ProtocolLimits/maximumKindsPerPull`` kinds, each within
    /// ``ProtocolLimits/problem(kind:)``, cursors in the `UPDATEDAT:ID` form
    /// or `null`, a limit of 1 to ``maximumLimit``, and `spaces`, when
    /// present, as ``SpaceCursorsCodec/decode(_:at:kinds:)`` reads it (each
    /// space's kinds among the request's).
    ///
    /// - Throws: ``WireError``; a malformed cursor is ``WireError/badCursor(path:text:)``.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> PullRequest {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["cursors", "limit", "resync", "spaces"])
        let cursorsPath = object.path(of: "cursors")
        let members = try object.object("cursors")
        // Counted before any kind is looked at: each kind costs the server queries.
        if members.count > ProtocolLimits.maximumKindsPerPull {
            throw .invalidValue(path: cursorsPath, reason: "\(members.count) kinds, at most \(ProtocolLimits.maximumKindsPerPull) in one pull")
        }
        var cursors: [String: PullCursor?] = [:]
        for (kind, value) in members {
            if kind.isEmpty { throw .invalidValue(path: JSONPath.member(cursorsPath, kind), reason: "an empty kind") }
            if let problem = ProtocolLimits.problem(kind: kind) {
                // The path would repeat an over-long kind; the reason says what is wrong.
                throw .invalidValue(path: cursorsPath, reason: problem)
            }
            let path = JSONPath.member(cursorsPath, kind)
            switch value {
            case .null: cursors[kind] = .some(nil)
            case .string(let text): cursors[kind] = try PullCursorCodec.decode(text, at: path)
            default: throw .wrongType(path: path, expected: "a cursor string or null")
            }
        }
        let limit = try object.int64("limit")
        guard limit >= 1, limit <= Int64(maximumLimit) else {
            throw .invalidValue(path: object.path(of: "limit"), reason: "\(limit) is not 1 to \(maximumLimit)")
        }
        let isResync = try object.bool("resync")
        var spaces: [SpaceID: SpaceCursors]?
        if let held = object.members["spaces"] {
            spaces = try SpaceCursorsCodec.decode(held, at: object.path(of: "spaces"), kinds: Set(cursors.keys))
        }
        return PullRequest(cursors: cursors, limit: Int(limit), isResync: isResync, spaces: spaces)
    }
}

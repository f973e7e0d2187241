import SyncJournalProtocol

/// The `spaces` member of a pull and of a wait for changes: what a device
/// holds of each shared space (journals/PROTOCOL.md, "Pull across spaces").
///
/// ```json
/// {"2f9d1c3a-4b5e-4f60-8a71-9c2d3e4f5a6b": {"version": 1764000000300, "cursors": {"pin": "1764000000250:p7"}}}
/// ```
///
/// A kind's cursor is `UPDATEDAT:ID`, or `null` (as a kind left out: from
/// the start); `version` is an integer or `null` (no description held).
package enum SpaceCursorsCodec {
    /// The member's value. The personal space has no id and is never in it
    /// (its cursors are the request's own `cursors`): an entry for it is left out.
    package static func encode(_ spaces: [SpaceID: SpaceCursors]) -> JSONValue {
        var members: [String: JSONValue] = [:]
        for (space, held) in spaces {
            guard let id = space.text else { continue }
            members[id] = .object([
                "version": held.version.map { .integer($0) } ?? .null,
                "cursors": .object(held.cursors.mapValues { cursor in cursor.map { .string(PullCursorCodec.encode($0)) } ?? .null }),
            ])
        }
        return .object(members)
    }

    /// The spaces `json` (found at `path`) stands for: at most
    /// ``ProtocolLimits/maximumSpacesPerUser``, each named by its id in
    /// lowercase `8-4-4-4-12` hex, with `version` and `cursors` (both
    /// required), whose kinds are among `kinds` (the request's own kinds: the
    /// kinds pulled in every space).
    ///
    /// - Throws: ``WireError``; a malformed cursor is ``WireError/badCursor(path:text:)``.
    package static func decode(_ json: JSONValue, at path: String, kinds: Set<String>) throws(WireError) -> [SpaceID: SpaceCursors] {
        guard case .object(let members) = json else { throw .wrongType(path: path, expected: "an object of spaces") }
        // Counted before any space is looked at: each costs the server a read.
        if members.count > ProtocolLimits.maximumSpacesPerUser {
            throw .invalidValue(path: path, reason: "\(members.count) spaces, at most \(ProtocolLimits.maximumSpacesPerUser)")
        }
        var spaces: [SpaceID: SpaceCursors] = [:]
        // In id order, so a body with several problems always names the same one.
        for (key, value) in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            let spacePath = JSONPath.member(path, key)
            let space = try JSONObjectReader.spaceID(key, at: spacePath)
            let object = try JSONObjectReader(value, at: spacePath, allowed: ["version", "cursors"])
            let version = try object.optionalInt64("version")
            let cursorsPath = object.path(of: "cursors")
            var cursors: [String: PullCursor?] = [:]
            for (kind, cursor) in try object.object("cursors").sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                guard kinds.contains(kind) else {
                    // A kind past the limit would make the path as long as itself.
                    let kindPath = kind.utf8.count <= ProtocolLimits.maximumKindBytes ? JSONPath.member(cursorsPath, kind) : cursorsPath
                    throw .invalidValue(path: kindPath, reason: "a kind the request's cursors do not name (every space is pulled in the same kinds)")
                }
                let kindPath = JSONPath.member(cursorsPath, kind)
                switch cursor {
                case .null: cursors[kind] = .some(nil)
                case .string(let text): cursors[kind] = try PullCursorCodec.decode(text, at: kindPath)
                default: throw .wrongType(path: kindPath, expected: "a cursor string or null")
                }
            }
            spaces[space] = SpaceCursors(version: version, cursors: cursors)
        }
        return spaces
    }
}

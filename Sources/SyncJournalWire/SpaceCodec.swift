import SyncJournalProtocol

/// The JSON of a ``Space`` as one of its members sees it (journals/PROTOCOL.md,
/// "Membership"):
///
/// ```json
/// {"space": "2f9d1c3a-4b5e-4f60-8a71-9c2d3e4f5a6b", "name": "Weekend pins", "role": "editor",
///  "members": [{"role": "owner", "user": "dad"}, {"role": "editor", "user": "kid"}], "version": 1764000000300}
/// ```
///
/// ```swift
/// let json = SpaceCodec.encode(space)
/// let again = try SpaceCodec.decode(json, at: "$.space")
/// ```
package enum SpaceCodec {
    static let members: Set<String> = ["space", "name", "role", "members", "version"]

    /// The space's JSON, its members ordered by the bytes of their user
    /// names (the one order the protocol gives them).
    package static func encode(_ space: Space) -> JSONValue {
        let members = space.members.sorted { $0.user.utf8.lexicographicallyPrecedes($1.user.utf8) }
        return .object([
            "space": .string(space.id.text ?? ""),
            "name": .string(space.name),
            "role": .string(space.role.rawValue),
            "members": .array(members.map { .object(["role": .string($0.role.rawValue), "user": .string($0.user)]) }),
            "version": .integer(space.version),
        ])
    }

    /// The space `json` (found at `path`) stands for: an id in lowercase
    /// `8-4-4-4-12` hex, a name of 1 to ``ProtocolLimits/maximumSpaceNameBytes``
    /// bytes without U+0000, a role, at most ``ProtocolLimits/maximumMembersPerSpace``
    /// members, each a role and a user, in the order of their user names'
    /// bytes with no user twice, and an integer version.
    package static func decode(_ json: JSONValue, at path: String) throws(WireError) -> Space {
        let object = try JSONObjectReader(json, at: path, allowed: members)
        let id = try object.spaceID("space")
        let name = try object.spaceName("name")
        let role = try object.role("role")
        let membersPath = object.path(of: "members")
        let items = try object.array("members")
        if items.count > ProtocolLimits.maximumMembersPerSpace {
            throw .invalidValue(path: membersPath, reason: "\(items.count) members, at most \(ProtocolLimits.maximumMembersPerSpace)")
        }
        var members: [SpaceMember] = []
        members.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            let member = try JSONObjectReader(item, at: JSONPath.element(membersPath, index), allowed: ["role", "user"])
            let user = try member.userName("user")
            if let previous = members.last, !previous.user.utf8.lexicographicallyPrecedes(user.utf8) {
                throw .invalidValue(path: member.path(of: "user"), reason: previous.user == user
                    ? "\"\(user)\" is a member twice" : "members are not in the order of their user names' bytes")
            }
            members.append(SpaceMember(user: user, role: try member.role("role")))
        }
        return Space(id: id, name: name, role: role, members: members, version: try object.int64("version"))
    }

    /// The spaces of the array `json` (found at `path`), in the order of
    /// their ids' bytes with no space twice, at most ``ProtocolLimits/maximumSpacesPerUser``.
    static func decodeList(_ json: JSONValue, at path: String) throws(WireError) -> [Space] {
        guard case .array(let items) = json else { throw .wrongType(path: path, expected: "an array") }
        if items.count > ProtocolLimits.maximumSpacesPerUser {
            throw .invalidValue(path: path, reason: "\(items.count) spaces, at most \(ProtocolLimits.maximumSpacesPerUser)")
        }
        var spaces: [Space] = []
        spaces.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            let elementPath = JSONPath.element(path, index)
            let space = try decode(item, at: elementPath)
            if let previous = spaces.last, !(previous.id < space.id) {
                throw .invalidValue(path: JSONPath.member(elementPath, "space"), reason: previous.id == space.id
                    ? "space \(space.id) is listed twice" : "spaces are not in the order of their ids' bytes")
            }
            spaces.append(space)
        }
        return spaces
    }

    /// The array of `spaces`, ordered by their ids' bytes.
    static func encodeList(_ spaces: [Space]) -> JSONValue {
        .array(spaces.sorted { $0.id < $1.id }.map(encode))
    }
}

import SyncJournalProtocol

/// The body of `POST /v1/spaces/members/set`:
/// `{"space": SPACEID, "user": USER, "role": ROLE}`.
///
/// ```swift
/// let body = SetSpaceMemberRequestCodec.encode(space: id, user: "kid", role: .editor)
/// let change = try SetSpaceMemberRequestCodec.decode(body)   // .setMember
/// ```
package enum SetSpaceMemberRequestCodec {
    /// The request body.
    package static func encode(space: SpaceID, user: String, role: SpaceRole) -> [UInt8] {
        JSONValue.object(["space": .string(space.text ?? ""), "user": .string(user), "role": .string(role.rawValue)]).encoded()
    }

    /// The ``SpaceChange/setMember(_:user:role:)`` a body stands for: an id
    /// in lowercase `8-4-4-4-12` hex, a user of 1 to 128 bytes without
    /// U+0000, a role of `owner`, `editor` or `viewer`.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    package static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> SpaceChange {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["space", "user", "role"])
        return .setMember(try object.spaceID("space"), user: try object.userName("user"), role: try object.role("role"))
    }
}

import SyncJournalProtocol

/// The body of `POST /v1/spaces/members/remove`: `{"space": SPACEID, "user": USER}`.
///
/// ```swift
/// let body = RemoveSpaceMemberRequestCodec.encode(space: id, user: "kid")
/// let change = try RemoveSpaceMemberRequestCodec.decode(body)   // .removeMember
/// ```
package enum RemoveSpaceMemberRequestCodec {
    /// The request body.
    package static func encode(space: SpaceID, user: String) -> [UInt8] {
        JSONValue.object(["space": .string(space.text ?? ""), "user": .string(user)]).encoded()
    }

    /// The ``SpaceChange/removeMember(_:user:)`` a body stands for: an id
    /// in lowercase `8-4-4-4-12` hex, a user of 1 to 128 bytes without U+0000.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    package static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> SpaceChange {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["space", "user"])
        return .removeMember(try object.spaceID("space"), user: try object.userName("user"))
    }
}

import SyncJournalProtocol

/// The body of `POST /v1/spaces/rename`: `{"space": SPACEID, "name": NAME}`.
///
/// ```swift
/// let body = RenameSpaceRequestCodec.encode(space: id, name: "Summer pins")
/// let change = try RenameSpaceRequestCodec.decode(body)   // .rename
/// ```
package enum RenameSpaceRequestCodec {
    /// The request body.
    package static func encode(space: SpaceID, name: String) -> [UInt8] {
        JSONValue.object(["space": .string(space.text ?? ""), "name": .string(name)]).encoded()
    }

    /// The ``SpaceChange/rename(_:name:)`` a body stands for, checked as a create's.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    package static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> SpaceChange {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["space", "name"])
        return .rename(try object.spaceID("space"), name: try object.spaceName("name"))
    }
}

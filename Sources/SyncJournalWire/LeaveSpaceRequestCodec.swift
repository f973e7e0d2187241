import SyncJournalProtocol

/// The body of `POST /v1/spaces/leave`: `{"space": SPACEID}`.
///
/// ```swift
/// let body = LeaveSpaceRequestCodec.encode(space: id)
/// let change = try LeaveSpaceRequestCodec.decode(body)   // .leave
/// ```
package enum LeaveSpaceRequestCodec {
    /// The request body.
    package static func encode(space: SpaceID) -> [UInt8] {
        JSONValue.object(["space": .string(space.text ?? "")]).encoded()
    }

    /// The ``SpaceChange/leave(_:)`` a body stands for: an id in lowercase `8-4-4-4-12` hex.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    package static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> SpaceChange {
        .leave(try JSONObjectReader.body(body, parser: parser, allowed: ["space"]).spaceID("space"))
    }
}

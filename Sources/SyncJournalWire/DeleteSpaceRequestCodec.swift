import SyncJournalProtocol

/// The body of `POST /v1/spaces/delete`: `{"space": SPACEID}`.
///
/// ```swift
/// let body = DeleteSpaceRequestCodec.encode(space: id)
/// let change = try DeleteSpaceRequestCodec.decode(body)   // .delete
/// ```
package enum DeleteSpaceRequestCodec {
    /// The request body.
    package static func encode(space: SpaceID) -> [UInt8] {
        JSONValue.object(["space": .string(space.text ?? "")]).encoded()
    }

    /// The ``SpaceChange/delete(_:)`` a body stands for: an id in lowercase `8-4-4-4-12` hex.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    package static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> SpaceChange {
        .delete(try JSONObjectReader.body(body, parser: parser, allowed: ["space"]).spaceID("space"))
    }
}

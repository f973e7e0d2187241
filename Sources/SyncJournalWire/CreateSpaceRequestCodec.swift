import SyncJournalProtocol

/// The body of `POST /v1/spaces/create`: `{"space": SPACEID, "name": NAME}`.
///
/// ```swift
/// let body = CreateSpaceRequestCodec.encode(space: .random(), name: "Weekend pins")   // the client
/// let change = try CreateSpaceRequestCodec.decode(body)                               // the server: .create
/// ```
package enum CreateSpaceRequestCodec {
    /// The request body.
    package static func encode(space: SpaceID, name: String) -> [UInt8] {
        JSONValue.object(["space": .string(space.text ?? ""), "name": .string(name)]).encoded()
    }

    /// The ``SpaceChange/create(_:name:)`` a body stands for: an id in
    /// lowercase `8-4-4-4-12` hex, a name of 1 to
    /// ``ProtocolLimits/maximumSpaceNameBytes`` bytes without U+0000.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    package static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> SpaceChange {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["space", "name"])
        return .create(try object.spaceID("space"), name: try object.spaceName("name"))
    }
}

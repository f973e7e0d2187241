import SyncJournalProtocol

/// The 200 body of `POST /v1/spaces/list`: `{"spaces": [SPACE, …]}`, every
/// shared space the caller is a member of, ordered by the bytes of their ids.
///
/// ```swift
/// let body = SpaceListReplyCodec.encode(spaces)        // the server
/// let spaces = try SpaceListReplyCodec.decode(body)    // the client
/// ```
package enum SpaceListReplyCodec {
    /// The reply body, the spaces ordered by id.
    package static func encode(_ spaces: [Space]) -> [UInt8] {
        JSONValue.object(["spaces": SpaceCodec.encodeList(spaces)]).encoded()
    }

    /// The spaces of a reply body: at most ``ProtocolLimits/maximumSpacesPerUser``,
    /// in id order, none twice.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    package static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> [Space] {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["spaces"])
        return try SpaceCodec.decodeList(try object.value("spaces"), at: object.path(of: "spaces"))
    }
}

import SyncJournalProtocol

/// The 200 body of a membership change: `{"space": SPACE}` for create,
/// rename, members/set and members/remove (the space as it is after the
/// change), `{}` for leave, delete and a members/remove of the caller themself.
///
/// ```swift
/// let body = SpaceChangeReplyCodec.encode(space)                      // the server; nil after a leave or delete
/// let space = try SpaceChangeReplyCodec.decode(body, at: .renameSpace)     // the client
/// ```
package enum SpaceChangeReplyCodec {
    /// The reply body: the space, or `{}` for `nil`.
    package static func encode(_ space: Space?) -> [UInt8] {
        JSONValue.object(space.map { ["space": SpaceCodec.encode($0)] } ?? [:]).encoded()
    }

    /// The space of a reply to a request posted to `endpoint`: required
    /// when ``SyncEndpoint/repliesWithSpace``, else the body is `{}` and the
    /// answer `nil`. A members/remove that removed the caller themself is
    /// answered `{}` as a leave is (the caller no longer sees the space).
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    package static func decode(_ body: some Collection<UInt8>, at endpoint: SyncEndpoint,
                               parser: JSONParser = JSONParser()) throws(WireError) -> Space? {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: endpoint.repliesWithSpace ? ["space"] : [])
        guard endpoint.repliesWithSpace else { return nil }
        if endpoint == .removeSpaceMember && object.members["space"] == nil { return nil }
        return try SpaceCodec.decode(try object.value("space"), at: object.path(of: "space"))
    }
}

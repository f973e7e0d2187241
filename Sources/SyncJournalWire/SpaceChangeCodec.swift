import SyncJournalProtocol

/// Every membership request body, by the change it asks for: the client
/// encodes a ``SpaceChange`` for its membership path (``SyncEndpoint/init(_:)``), the server decodes
/// the body of the path it was posted to.
///
/// ```swift
/// let body = SpaceChangeCodec.encode(.setMember(id, user: "kid", role: .viewer))   // to SyncEndpoint.setSpaceMember
/// let change = try SpaceChangeCodec.decode(body, at: .setSpaceMember)               // the router
/// ```
package enum SpaceChangeCodec {
    /// The body of `change`'s request (posted to `SyncEndpoint(change)`).
    package static func encode(_ change: SpaceChange) -> [UInt8] {
        switch change {
        case .create(let space, let name): return CreateSpaceRequestCodec.encode(space: space, name: name)
        case .rename(let space, let name): return RenameSpaceRequestCodec.encode(space: space, name: name)
        case .setMember(let space, let user, let role): return SetSpaceMemberRequestCodec.encode(space: space, user: user, role: role)
        case .removeMember(let space, let user): return RemoveSpaceMemberRequestCodec.encode(space: space, user: user)
        case .leave(let space): return LeaveSpaceRequestCodec.encode(space: space)
        case .delete(let space): return DeleteSpaceRequestCodec.encode(space: space)
        }
    }

    /// The change a body posted to `endpoint` asks for; `nil` for
    /// ``SyncEndpoint/listSpaces``, which changes nothing (its body, `{}`,
    /// is checked all the same), and for a path that is not a membership
    /// path (the router never asks).
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    package static func decode(_ body: some Collection<UInt8>, at endpoint: SyncEndpoint,
                               parser: JSONParser = JSONParser()) throws(WireError) -> SpaceChange? {
        switch endpoint {
        case .createSpace: return try CreateSpaceRequestCodec.decode(body, parser: parser)
        case .renameSpace: return try RenameSpaceRequestCodec.decode(body, parser: parser)
        case .setSpaceMember: return try SetSpaceMemberRequestCodec.decode(body, parser: parser)
        case .removeSpaceMember: return try RemoveSpaceMemberRequestCodec.decode(body, parser: parser)
        case .leaveSpace: return try LeaveSpaceRequestCodec.decode(body, parser: parser)
        case .deleteSpace: return try DeleteSpaceRequestCodec.decode(body, parser: parser)
        case .listSpaces:
            try ListSpacesRequestCodec.decode(body, parser: parser)
            return nil
        case .push, .pull, .read, .wait, .health, .attachmentStatus, .uploadAttachment, .downloadAttachment:
            return nil
        }
    }
}

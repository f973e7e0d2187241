import SyncJournalProtocol

/// Every membership request body, by the change it asks for: the client
/// encodes a ``SpaceChange`` for its ``SpaceEndpoint``, the server decodes
/// the body of the path it was posted to.
///
/// ```swift
/// let body = SpaceChangeCodec.encode(.setMember(id, user: "kid", role: .viewer))   // to SpaceEndpoint.setMember
/// let change = try SpaceChangeCodec.decode(body, at: .setMember)                   // the router
/// ```
package enum SpaceChangeCodec {
    /// The body of `change`'s request (posted to `SpaceEndpoint(change)`).
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
    /// ``SpaceEndpoint/list``, which changes nothing (its body, `{}`, is checked all the same).
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    package static func decode(_ body: some Collection<UInt8>, at endpoint: SpaceEndpoint,
                               parser: JSONParser = JSONParser()) throws(WireError) -> SpaceChange? {
        switch endpoint {
        case .create: return try CreateSpaceRequestCodec.decode(body, parser: parser)
        case .rename: return try RenameSpaceRequestCodec.decode(body, parser: parser)
        case .setMember: return try SetSpaceMemberRequestCodec.decode(body, parser: parser)
        case .removeMember: return try RemoveSpaceMemberRequestCodec.decode(body, parser: parser)
        case .leave: return try LeaveSpaceRequestCodec.decode(body, parser: parser)
        case .delete: return try DeleteSpaceRequestCodec.decode(body, parser: parser)
        case .list:
            try ListSpacesRequestCodec.decode(body, parser: parser)
            return nil
        }
    }
}

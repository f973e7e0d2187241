import SyncJournalProtocol
import SyncJournalWire

/// The membership paths of shared spaces (journals/PROTOCOL.md,
/// "Membership"): each authorized by the storage's membership rules, read
/// in the transaction that applies the change, and refused with the
/// refusal's status and code (404 `no_such_space` for a space the caller
/// is not a member of, whether or not it exists; 403 `forbidden`; 409
/// `space_exists`, `last_owner`, `too_many`; 404 `unknown_user`).
extension SyncRouter {
    /// A create, rename, members/set, members/remove, leave or delete:
    /// `{"space": SPACE}` after it, or `{}` when the caller is no longer a
    /// member (a leave, a delete, a members/remove of themselves).
    func changeSpace(_ body: [UInt8], at endpoint: SyncEndpoint, user: String) throws(RouteFailure) -> HTTPResponse {
        guard let change = try decode({ () throws(WireError) in try SpaceChangeCodec.decode(body, at: endpoint) }) else {
            // Only the list changes nothing, and its body has been checked.
            return try spaceList(user: user)
        }
        let space = try store { () throws(StorageError) in try storage.change(user: user, change) }
        return .json(status: 200, body: SpaceChangeReplyCodec.encode(endpoint.repliesWithSpace ? space : nil))
    }

    /// `{"spaces": [SPACE, …]}`: every shared space the caller is a member of, ordered by id.
    func listSpaces(_ body: [UInt8], user: String) throws(RouteFailure) -> HTTPResponse {
        try decode { () throws(WireError) in try ListSpacesRequestCodec.decode(body) }
        return try spaceList(user: user)
    }

    private func spaceList(user: String) throws(RouteFailure) -> HTTPResponse {
        let spaces = try store { () throws(StorageError) in try storage.spaces(user: user) }
        return .json(status: 200, body: SpaceListReplyCodec.encode(spaces))
    }
}

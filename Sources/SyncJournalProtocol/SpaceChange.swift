/// A change to shared spaces and their members, sent to the server as one
/// membership request (journals/PROTOCOL.md, "Membership").
///
/// ```swift
/// let id = SpaceID.random()
/// let changes: [SpaceChange] = [.create(id, name: "Weekend pins"),
///                               .setMember(id, user: "kid", role: .editor)]
/// ```
public enum SpaceChange: Sendable, Hashable, CustomStringConvertible {
    /// Creates space `id` with the caller as its owner (a resend of the
    /// same create by its owner answers the space again).
    case create(SpaceID, name: String)
    /// Renames the space; owners only.
    case rename(SpaceID, name: String)
    /// Adds `user` with `role`, or gives a member `role`; owners only.
    case setMember(SpaceID, user: String, role: SpaceRole)
    /// Removes `user`; owners, or the user themself.
    case removeMember(SpaceID, user: String)
    /// The caller leaves the space.
    case leave(SpaceID)
    /// Deletes the space, its members and its records; owners only.
    case delete(SpaceID)

    /// The space the change is about.
    public var space: SpaceID {
        switch self {
        case .create(let id, _), .rename(let id, _), .setMember(let id, _, _), .removeMember(let id, _), .leave(let id), .delete(let id):
            return id
        }
    }

    /// A short account, as a log line shows it.
    public var description: String {
        switch self {
        case .create(let id, let name): return "create space \(id) \"\(name)\""
        case .rename(let id, let name): return "rename space \(id) to \"\(name)\""
        case .setMember(let id, let user, let role): return "set \(user) as \(role) of space \(id)"
        case .removeMember(let id, let user): return "remove \(user) from space \(id)"
        case .leave(let id): return "leave space \(id)"
        case .delete(let id): return "delete space \(id)"
        }
    }
}

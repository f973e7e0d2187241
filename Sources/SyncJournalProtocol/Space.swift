/// A shared space as one of its members sees it: its name, the member's own
/// role and every member (journals/PROTOCOL.md, "Spaces").
///
/// ```swift
/// let space = Space(id: .random(), name: "Weekend pins", role: .owner,
///                   members: [SpaceMember(user: "dad", role: .owner)], version: 1)
/// print(space.role.canManage)   // true
/// ```
public struct Space: Sendable, Hashable, Identifiable {
    /// The space's id (never ``SpaceID/personal``).
    public var id: SpaceID
    /// The name people see; not unique.
    public var name: String
    /// The role of the user this description was given to.
    public var role: SpaceRole
    /// Every member, ordered by the bytes of their user names.
    public var members: [SpaceMember]
    /// The stamp of the space's last membership change, rename or
    /// creation: a later description has a larger version.
    public var version: Int64

    /// A description of space `id`.
    public init(id: SpaceID, name: String, role: SpaceRole, members: [SpaceMember], version: Int64) {
        self.id = id
        self.name = name
        self.role = role
        self.members = members
        self.version = version
    }
}

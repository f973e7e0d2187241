/// A user's membership of one shared space as the rules read it: the
/// space's name and version, the user's role, and the space's last stamp
/// (what a pull compares cursors against to skip an unchanged space).
package struct SpaceStanding: Sendable, Hashable {
    /// The space.
    package var space: SpaceID
    /// Its name.
    package var name: String
    /// The user's role in it.
    package var role: SpaceRole
    /// The stamp of its last membership change, rename or creation (``Space/version``).
    package var version: Int64
    /// The last stamp drawn in it: its last row's, or its version when later.
    package var lastStamp: Int64

    /// A standing as a storage read it.
    package init(space: SpaceID, name: String, role: SpaceRole, version: Int64, lastStamp: Int64) {
        self.space = space
        self.name = name
        self.role = role
        self.version = version
        self.lastStamp = lastStamp
    }

    /// The space as this member sees it, with `members` in user byte order.
    package func description(members: [SpaceMember]) -> Space {
        Space(id: space, name: name, role: role, members: members.sorted { $0.user.utf8.lexicographicallyPrecedes($1.user.utf8) },
              version: version)
    }
}

/// One member of a shared space and its role.
///
/// ```swift
/// let member = SpaceMember(user: "kid", role: .editor)
/// ```
public struct SpaceMember: Sendable, Hashable {
    /// The member's user name, as the server's user directory knows it.
    public var user: String
    /// What the member may do.
    public var role: SpaceRole

    /// A member `user` with `role`.
    public init(user: String, role: SpaceRole) {
        self.user = user
        self.role = role
    }
}

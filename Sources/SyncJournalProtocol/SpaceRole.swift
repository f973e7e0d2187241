/// What a member may do in a shared space (journals/PROTOCOL.md, "Spaces").
///
/// ```swift
/// let role = SpaceRole(rawValue: "viewer")!
/// print(role.canWrite)      // false
/// ```
public enum SpaceRole: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Reads and writes the space's records, manages its members, renames
    /// and deletes it. A space always has at least one.
    case owner
    /// Reads and writes the space's records.
    case editor
    /// Reads the space's records.
    case viewer

    /// Whether the role may create, update and delete records.
    public var canWrite: Bool { self != .viewer }

    /// Whether the role may add, remove and re-role members, rename and delete the space.
    public var canManage: Bool { self == .owner }

    /// The role's name on the wire: `owner`, `editor` or `viewer`.
    public var description: String { rawValue }
}

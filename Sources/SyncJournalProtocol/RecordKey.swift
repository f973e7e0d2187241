/// Identifies one record: its space, its entity kind and its id (record
/// ids are unique per space).
public struct RecordKey: Sendable, Hashable, CustomStringConvertible {
    /// The entity kind (the server's table).
    public var kind: String
    /// The record's id within its kind and space.
    public var id: String
    /// The space the record lives in.
    public var space: SpaceID

    /// A key for `id` of `kind` in `space` (the personal space unless named).
    public init(kind: String, id: String, space: SpaceID = .personal) {
        self.kind = kind
        self.id = id
        self.space = space
    }

    /// Kind first, then id, then space (the personal space first).
    package static func < (lhs: RecordKey, rhs: RecordKey) -> Bool {
        if lhs.kind != rhs.kind { return lhs.kind < rhs.kind }
        if lhs.id != rhs.id { return lhs.id < rhs.id }
        return lhs.space < rhs.space
    }

    /// `kind/id`, with the space's id after an `@` for a shared space.
    public var description: String { space.isPersonal ? "\(kind)/\(id)" : "\(kind)/\(id)@\(space)" }
}

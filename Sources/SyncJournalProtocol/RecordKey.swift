/// Identifies one record: its entity kind and its id.
public struct RecordKey: Sendable, Hashable, CustomStringConvertible {
    /// The entity kind (the server's table).
    public var kind: String
    /// The record's id within its kind.
    public var id: String

    /// A key for `id` of `kind`.
    public init(kind: String, id: String) {
        self.kind = kind
        self.id = id
    }

    /// Kind first, then id.
    package static func < (lhs: RecordKey, rhs: RecordKey) -> Bool {
        (lhs.kind, lhs.id) < (rhs.kind, rhs.id)
    }

    /// `kind/id`.
    public var description: String { "\(kind)/\(id)" }
}

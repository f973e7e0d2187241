/// Where a pull of one kind stopped: the `(updatedAt, id)` of the last row
/// received. Rows are ordered by that pair, so two rows sharing a stamp are
/// never skipped. Cursors come only from server data, never from a device clock.
public struct PullCursor: Sendable, Hashable, CustomStringConvertible {
    /// The server stamp of the last row received.
    public var updatedAt: Int64
    /// The id of the last row received (ties on `updatedAt` break on it).
    public var id: String

    /// A cursor after the row `(updatedAt, id)`.
    public init(updatedAt: Int64, id: String) {
        self.updatedAt = updatedAt
        self.id = id
    }

    /// Lexicographic `(updatedAt, id)` order, comparing ids by their UTF-8 bytes.
    package static func < (lhs: PullCursor, rhs: PullCursor) -> Bool {
        if lhs.updatedAt != rhs.updatedAt { return lhs.updatedAt < rhs.updatedAt }
        return Array(lhs.id.utf8).lexicographicallyPrecedes(Array(rhs.id.utf8))
    }

    /// `updatedAt:id`, the pull protocol's wire form.
    public var description: String { "\(updatedAt):\(id)" }
}

/// Why the pull rules refuse a request, before or instead of reading rows.
/// Each storage reports it in its own terms (an HTTP status, a transport error).
package enum PullRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// A request outside the protocol's limits: a limit out of range, an empty kind.
    case badRequest(String)
    /// A cursor no row can have: an empty id, or one longer than a record id may be.
    case badCursor(kind: String, reason: String)
    /// Cursors behind a purged tombstone: those clients missed a deletion
    /// the server can no longer tell them about, so they must re-pull.
    /// `kinds` are the personal space's, `spaceKinds` each shared space's
    /// (journals/PROTOCOL.md, "Pull across spaces"), kinds sorted.
    case cursorExpired(kinds: [String], spaceKinds: [SpaceID: [String]] = [:])

    /// One line saying what was refused.
    package var description: String {
        switch self {
        case .badRequest(let reason): return "bad request: \(reason)"
        case .badCursor(let kind, let reason): return "bad cursor for \(kind): \(reason)"
        case .cursorExpired(let kinds, let spaceKinds): return "cursor expired for \(PullRefusal.expiredKinds(kinds, spaceKinds).joined(separator: ", "))"
        }
    }

    /// Every kind of an expired pull, each once, sorted: the personal
    /// space's and every shared space's (a client re-pulls each in every space).
    package static func expiredKinds(_ kinds: [String], _ spaceKinds: [SpaceID: [String]]) -> [String] {
        Set(kinds).union(spaceKinds.values.joined()).sorted()
    }
}

/// What the server did with one mutation.
public enum MutationOutcome: Sendable, Hashable {
    /// Applied; `row` is the server's copy afterwards with its new stamp (a tombstone for a delete).
    case applied(ServerRow)
    /// Refused because the server's copy changed since the base; `server` is
    /// its current copy, `nil` if it was deleted.
    case conflict(server: ServerRow?)
    /// Refused; a permanent rejection will never succeed, a transient one may.
    case rejected(reason: String, permanent: Bool)
    /// A create whose id already exists, from a server that does not
    /// remember operation ids (an insert that ignores duplicates). The engine
    /// reads the row back: only a readable row confirms it.
    case duplicate
    /// An update or delete that matched no row, from a server that does not
    /// say why: the row changed, was deleted, or is not visible to this user.
    /// The engine reads it back to tell a conflict from a lost row.
    case noMatch
}

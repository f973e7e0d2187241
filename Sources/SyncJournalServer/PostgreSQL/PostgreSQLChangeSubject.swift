import SyncJournalProtocol

/// What one change notification is about, as the announcer gathers them:
/// pushes into a user's personal space or into a shared space (with the
/// kinds they wrote, empty: any), or a shared space's membership (with the
/// users whose own membership changed).
enum PostgreSQLChangeSubject: Hashable {
    case user(String)
    case space(SpaceID)
    case membership(SpaceID)

    /// The subject and the names (kinds or users) of `change`, `nil` for a change that is not announced.
    static func of(_ change: StorageChange) -> (subject: PostgreSQLChangeSubject, names: Set<String>)? {
        switch change {
        case .committed(let user, let kinds): return (.user(user), kinds)
        case .committedInSpace(let space, let kinds): return (.space(space), kinds)
        case .membershipChanged(let space, let users): return (.membership(space), users)
        case .unknown: return nil
        }
    }

    /// Two announcements of this subject as one: kinds add up, and an
    /// empty set of kinds (any kind) stays so; users add up.
    func merged(_ known: Set<String>, _ more: Set<String>) -> Set<String> {
        switch self {
        case .user, .space: return known.isEmpty || more.isEmpty ? [] : known.union(more)
        case .membership: return known.union(more)
        }
    }
}

import SyncJournalProtocol

/// What a ``SyncStorage`` tells its change observer
/// (``SyncStorage/observeChanges(_:)``): a committed push, a membership
/// change, or that changes may have gone unseen.
///
/// ```swift
/// storage.observeChanges { change in
///     switch change {
///     case .committed(let user, let kinds): waiters.wake(user: user, kinds: kinds)
///     case .committedInSpace(let space, let kinds): waiters.wake(space: space, kinds: kinds)
///     case .membershipChanged(let space, let users): waiters.wake(space: space, users: users)
///     case .unknown: waiters.wakeAll()
///     }
/// }
/// ```
public enum StorageChange: Sendable, Hashable {
    /// A push of `user` committed rows of `kinds` into `user`'s personal
    /// space (empty: kinds not known, any of them).
    case committed(user: String, kinds: Set<String>)
    /// A push committed rows of `kinds` into shared space `space` (empty:
    /// any kind): every member's waits that follow it may end.
    case committedInSpace(SpaceID, kinds: Set<String>)
    /// Shared space `space` was created, renamed, deleted or its members
    /// changed; `users` are those whose own membership changed (added,
    /// removed, given another role, or left), who may not follow the space
    /// (yet, or any longer). Every wait that follows the space ends too.
    case membershipChanged(SpaceID, users: Set<String>)
    /// Commits may have been missed (the notification connection was lost
    /// and made again): any user may have new rows.
    case unknown

    /// The change a committed push's `results` stand for in `user`'s
    /// personal space, or `nil` when it applied nothing there (see
    /// ``changes(user:results:)`` for every space).
    ///
    /// ```swift
    /// if let change = StorageChange(user: "u1", results: results) { observer(change) }
    /// ```
    public init?(user: String, results: [MutationResult]) {
        var kinds: Set<String> = []
        for result in results {
            if case .applied(let row) = result.outcome, row.space.isPersonal { kinds.insert(row.kind) }
        }
        guard !kinds.isEmpty else { return nil }
        self = .committed(user: user, kinds: kinds)
    }

    /// The changes a committed push's `results` stand for: one for the
    /// personal space and one per shared space it wrote rows into.
    ///
    /// ```swift
    /// for change in StorageChange.changes(user: "u1", results: results) { observer(change) }
    /// ```
    public static func changes(user: String, results: [MutationResult]) -> [StorageChange] {
        changes(user: user, applied: results.lazy.compactMap { result -> (SpaceID, String)? in
            if case .applied(let row) = result.outcome { return (row.space, row.kind) }
            return nil
        })
    }

    /// The changes of a push that applied rows of these spaces and kinds.
    static func changes(user: String, applied: some Sequence<(SpaceID, String)>) -> [StorageChange] {
        var kinds: [SpaceID: Set<String>] = [:]
        for (space, kind) in applied { kinds[space, default: []].insert(kind) }
        return kinds.keys.sorted(by: <).map { space in
            space.isPersonal ? .committed(user: user, kinds: kinds[space] ?? []) : .committedInSpace(space, kinds: kinds[space] ?? [])
        }
    }
}

import SyncJournalProtocol

/// What a ``SyncStorage`` tells its change observer
/// (``SyncStorage/observeChanges(_:)``): a committed push, or that pushes
/// may have gone unseen.
///
/// ```swift
/// storage.observeChanges { change in
///     switch change {
///     case .committed(let user, let kinds): waiters.wake(user: user, kinds: kinds)
///     case .unknown: waiters.wakeAll()
///     }
/// }
/// ```
public enum StorageChange: Sendable, Hashable {
    /// A push of `user` committed rows of `kinds` (empty: kinds not known, any of them).
    case committed(user: String, kinds: Set<String>)
    /// Commits may have been missed (the notification connection was lost
    /// and made again): any user may have new rows.
    case unknown

    /// The change a committed push's `results` stand for, or `nil` when it applied nothing.
    ///
    /// ```swift
    /// if let change = StorageChange(user: "u1", results: results) { observer(change) }
    /// ```
    public init?(user: String, results: [MutationResult]) {
        var kinds: Set<String> = []
        for result in results {
            if case .applied(let row) = result.outcome { kinds.insert(row.kind) }
        }
        guard !kinds.isEmpty else { return nil }
        self = .committed(user: user, kinds: kinds)
    }
}

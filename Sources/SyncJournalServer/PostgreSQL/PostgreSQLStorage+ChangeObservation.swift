import SyncJournalProtocol

extension PostgreSQLStorage {
    /// Calls `observer` after each committed push that applied rows, by any
    /// `sync-server` sharing the database (see ``SyncStorage/observeChanges(_:)``):
    /// a dedicated connection listens for the notification each push sends
    /// after its commit. Returns once that connection listens (or its
    /// first attempt failed; it keeps trying, and tells `observer`
    /// ``StorageChange/unknown`` once it listens after a failure).
    ///
    /// ```swift
    /// storage.observeChanges { change in print(change) }
    /// ```
    public func observeChanges(_ observer: @escaping @Sendable (StorageChange) -> Void) {
        changeNotifications.observe(observer)
    }

    /// Stops listening and closes the listening connection.
    ///
    /// ```swift
    /// storage.stopObservingChanges()
    /// ```
    public func stopObservingChanges() {
        changeNotifications.stop()
    }

    /// Commits a push and, when it applied rows, sends its notification in
    /// the same round trip, as a statement of its own after the commit.
    /// Inside the push's transaction it would hold PostgreSQL's notification
    /// lock until the commit is on disk, and every user's pushes would then
    /// commit one after another. Best effort: should the notification fail
    /// (or the server stop just before it), waits for that user last until
    /// their timeout, and the next wait's first look at storage finds the
    /// change at once. Only a failed commit fails the push.
    static func commitAnnouncing(user: String) -> (PostgreSQLConnection, [MutationResult]) throws(PostgreSQLError) -> Void {
        { connection, results throws(PostgreSQLError) in
            guard case .committed(let user, let kinds)? = StorageChange(user: user, results: results) else {
                try connection.execute("commit")
                return
            }
            let ended = try connection.pipeline([
                PostgreSQLStatement("commit"),
                PostgreSQLStatement("select pg_notify($1, $2 || chr(10) || coalesce(current_schema(), ''))",
                                    [.text(PostgreSQLChangeNotice.channel), .text(PostgreSQLChangeNotice.payload(user: user, kinds: kinds))]),
            ])
            _ = try ended[0].get()
        }
    }
}

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

    /// Sends the notification of a committed push that applied rows, in a
    /// statement of its own after the commit. Inside the push's transaction
    /// it would hold PostgreSQL's notification lock until the commit is on
    /// disk, and every user's pushes would then commit one after another.
    /// Best effort: should it fail (or the server stop just before it),
    /// waits for that user last until their timeout, and the next wait's
    /// first look at storage finds the change at once.
    func announceCommittedPush(user: String, results: [MutationResult]) {
        guard case .committed(let user, let kinds)? = StorageChange(user: user, results: results) else { return }
        _ = try? withPooledConnection { connection throws(PostgreSQLError) in
            try connection.execute("select pg_notify($1, $2 || chr(10) || coalesce(current_schema(), ''))",
                                   [.text(PostgreSQLChangeNotice.channel), .text(PostgreSQLChangeNotice.payload(user: user, kinds: kinds))])
        }
    }
}

import SyncJournalProtocol

extension PostgreSQLStorage {
    /// Calls `observer` after each committed push that applied rows, by any
    /// `sync-server` sharing the database (see ``SyncStorage/observeChanges(_:)``):
    /// a dedicated connection listens for the notifications pushes send
    /// after they commit. Returns once that connection listens (or its
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

    /// The database server process of the connection that listens for
    /// changes and its number (the first is 1), `nil` while none listens:
    /// for tests that end that connection.
    package var changeListenerConnection: (process: Int32, number: Int)? { changeNotifications.current?.listeningConnection }

    /// Blocks until a listening connection later than the `number`th
    /// listens (observers have been told of an unknown change by then), or
    /// `timeoutMilliseconds` passes; returns whether one did.
    package func waitForChangeListener(after number: Int, timeoutMilliseconds: Int) -> Bool {
        changeNotifications.current?.waitForConnection(after: number, timeoutMilliseconds: timeoutMilliseconds) ?? false
    }

    /// Commits a push and, when it applied rows, hands its notification to
    /// the announcer, which sends it with the others committed meanwhile.
    /// Inside the push's transaction it would hold PostgreSQL's notification
    /// lock until the commit is on disk, and every user's pushes would then
    /// commit one after another; sent by each push after its commit, it
    /// cost a transaction per push. Best effort: only a failed commit fails the push.
    func commitAnnouncing(user: String) -> (PostgreSQLConnection, [MutationResult]) throws(PostgreSQLError) -> Void {
        { [announcer] connection, results throws(PostgreSQLError) in
            try connection.execute("commit")
            for change in StorageChange.changes(user: user, results: results) { announcer.announce(change) }
        }
    }
}

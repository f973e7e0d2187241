import SyncJournalProtocol

extension PostgreSQLStorage {
    /// Calls `observer` after each committed push that applied rows, by any
    /// `sync-server` sharing the database (see ``SyncStorage/observeChanges(_:)``):
    /// a dedicated connection listens for the notification each push sends
    /// inside its transaction. Returns once that connection listens (or its
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

    /// Sends the notification of a push that applied rows, inside its
    /// transaction: listeners receive it when (and only if) it commits.
    func notifyChanges(user: String, results: [MutationResult], _ queries: PostgreSQLTransaction) throws(StorageError) {
        guard case .committed(let user, let kinds)? = StorageChange(user: user, results: results) else { return }
        do throws(PostgreSQLError) {
            try queries.connection.execute("select pg_notify($1, $2 || chr(10) || coalesce(current_schema(), ''))",
                                           [.text(PostgreSQLChangeNotice.channel), .text(PostgreSQLChangeNotice.payload(user: user, kinds: kinds))])
        } catch {
            throw .postgres(error)
        }
    }
}

import SyncJournalPlatform

/// ``PostgreSQLStorage``'s side of change notifications: the connection
/// string a ``PostgreSQLChangeListener`` connects with, and the listener
/// while someone observes changes.
///
/// ```swift
/// let notifications = PostgreSQLChangeNotifications(connection: conninfo)
/// notifications.observe { change in print(change) }
/// notifications.stop()
/// ```
final class PostgreSQLChangeNotifications: Sendable {
    private let connection: String
    private let listener = Mutex<PostgreSQLChangeListener?>(nil)

    /// Notifications from the database `connection` names.
    init(connection: String) {
        self.connection = connection
    }

    /// Starts a listener that calls `observer`, replacing (and stopping) an earlier one.
    func observe(_ observer: @escaping @Sendable (StorageChange) -> Void) {
        let fresh = PostgreSQLChangeListener(connection: connection, observer: observer)
        fresh.start()
        let previous = listener.withLock { current -> PostgreSQLChangeListener? in
            defer { current = fresh }
            return current
        }
        previous?.stop()
    }

    /// The listener, while someone observes changes.
    var current: PostgreSQLChangeListener? { listener.withLock { $0 } }

    /// Stops the listener, if any.
    func stop() {
        let previous = listener.withLock { current -> PostgreSQLChangeListener? in
            defer { current = nil }
            return current
        }
        previous?.stop()
    }
}

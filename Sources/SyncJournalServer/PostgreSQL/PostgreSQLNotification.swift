/// One notification a listening connection received (`NOTIFY channel, 'payload'`).
///
/// ```swift
/// for notification in try connection.takeNotifications() { print(notification.channel, notification.payload) }
/// ```
struct PostgreSQLNotification: Sendable, Hashable {
    /// The channel it was sent on.
    var channel: String
    /// Its payload (empty when none was given).
    var payload: String
    /// The database server process of the sending session.
    var senderProcessID: Int32
}

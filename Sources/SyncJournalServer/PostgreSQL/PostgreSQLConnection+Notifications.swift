import CLibPQ

extension PostgreSQLConnection {
    /// The connection's socket, to wait on for notifications; -1 when closed.
    ///
    /// ```swift
    /// try poller.watch(connection.socketDescriptor, readable: true, writable: false)
    /// ```
    var socketDescriptor: Int32 {
        guard let handle else { return -1 }
        return PQsocket(handle)
    }

    /// Reads what the server has sent (without waiting) and returns the
    /// notifications it held, oldest first.
    ///
    /// ```swift
    /// let notifications = try connection.takeNotifications()
    /// ```
    ///
    /// - Throws: ``PostgreSQLError`` with `connectionLost` set when the connection broke.
    func takeNotifications() throws(PostgreSQLError) -> [PostgreSQLNotification] {
        guard let handle else {
            throw PostgreSQLError(sqlState: nil, message: "the connection is closed", context: "listen",
                                  connection: redactedConnection, connectionLost: true)
        }
        guard PQconsumeInput(handle) == 1 else {
            throw PostgreSQLError(sqlState: nil, message: Self.oneLine(PQerrorMessage(handle)), context: "listen",
                                  connection: redactedConnection, connectionLost: true)
        }
        var notifications: [PostgreSQLNotification] = []
        while let notice = PQnotifies(handle) {
            let payload = notice.pointee.extra.map { String(cString: $0) } ?? ""
            let channel = notice.pointee.relname.map { String(cString: $0) } ?? ""
            notifications.append(PostgreSQLNotification(channel: channel, payload: payload, senderProcessID: notice.pointee.be_pid))
            PQfreemem(notice)
        }
        return notifications
    }
}

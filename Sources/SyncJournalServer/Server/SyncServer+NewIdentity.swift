import SyncJournalProtocol

/// `sync-server --new-identity`: the operator's step after restoring a
/// database from a backup (journals/PROTOCOL.md, "Server identity").
extension SyncServer {
    /// Gives the database `options` names a new random identity, with every
    /// server on it stopped, and returns the line to print: every device
    /// that synced with it then finds a different server and reconciles,
    /// uploading what the restore lost. Nothing else in the database changes.
    ///
    /// ```swift
    /// print(try SyncServer.replaceIdentity(options: options))   // "sync-server: sqlite ./sync-server.sqlite: identity ... is now ..."
    /// ```
    ///
    /// - Throws: ``SyncServerError/storage(_:)`` when the database cannot be opened or written.
    public static func replaceIdentity(options: SyncServerOptions) throws(SyncServerError) -> String {
        do throws(StorageError) {
            let before: ServerIdentity?
            let after: ServerIdentity
            let description: String
            if let connection = options.postgresConnection {
                let postgres = try PostgreSQLStorage(connection: connection, preparesStatements: options.postgresPreparesStatements)
                defer { postgres.closeConnections() }
                before = postgres.identity
                after = try postgres.replaceIdentity()
                description = "postgres \(postgres.redactedConnection)"
            } else {
                let sqlite = try SQLiteStorage(path: options.databasePath)
                defer { sqlite.closeConnections() }
                before = sqlite.identity
                after = try sqlite.replaceIdentity()
                description = "sqlite \(options.databasePath)"
            }
            return "sync-server: \(description): identity \(before?.description ?? "none") is now \(after); "
                + "devices that synced with it will report a different server until they reconcile"
        } catch {
            throw .storage(error)
        }
    }
}

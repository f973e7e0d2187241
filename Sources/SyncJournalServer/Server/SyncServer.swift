import SyncJournalPlatform
import SyncJournalServerPlatform

/// `sync-server` in-process: the storage (SQLite, or PostgreSQL with
/// ``SyncServerOptions/postgresConnection``), the router and the HTTP
/// server put together. Tests start one on port 0 and stop it with ``shutdown()``.
///
/// ```swift
/// var options = SyncServerOptions()
/// options.port = 0
/// try options.users.add(token: "t1", user: "alice")
/// let server = try SyncServer(options: options)
/// try server.start()
/// print(server.readyLine)   // sync-server listening on http://127.0.0.1:40123 (sqlite ./sync-server.sqlite)
/// server.shutdown()
/// ```
public final class SyncServer: Sendable {
    /// The options it was made with.
    public let options: SyncServerOptions
    /// The storage: a ``SQLiteStorage`` or a ``PostgreSQLStorage``.
    public let storage: any SyncStorage
    /// Where the storage is, for the ready line: `sqlite PATH` or `postgres CONNINFO` (without a password).
    public let storageDescription: String
    /// The HTTP server.
    public let http: HTTPServer
    /// The waits for changes held now (`POST /v1/sync/wait`).
    package let changeWaits: ChangeWaitRegistry
    /// Forgets remembered operation ids past the retention while the server runs.
    package let operationPruner: RememberedOperationPruner

    /// Opens the database; nothing listens until ``start()``.
    ///
    /// ```swift
    /// let server = try SyncServer(options: options) { line in print(line) }
    /// ```
    ///
    /// - Parameter log: where failures the clients are not told the details of go.
    /// - Throws: ``SyncServerError/storage(_:)`` when the database cannot be opened.
    public init(options: SyncServerOptions, log: @escaping @Sendable (String) -> Void = { _ in }) throws(SyncServerError) {
        self.options = options
        // Members are added by name: only users of the directory exist.
        let users = options.users
        let knownUsers: @Sendable (String) -> Bool = { users.knows(user: $0) }
        do throws(StorageError) {
            if let connection = options.postgresConnection {
                let postgres = try PostgreSQLStorage(connection: connection, tombstoneRetentionMilliseconds: options.tombstoneRetentionMilliseconds,
                                                   operationRetention: options.operationRetention, knownUsers: knownUsers,
                                                   preparesStatements: options.postgresPreparesStatements,
                                                   attachmentLimits: options.attachmentLimits)
                storage = postgres
                storageDescription = "postgres \(postgres.redactedConnection)"
            } else {
                storage = try SQLiteStorage(path: options.databasePath, tombstoneRetentionMilliseconds: options.tombstoneRetentionMilliseconds,
                                            operationRetention: options.operationRetention, knownUsers: knownUsers,
                                            attachmentLimits: options.attachmentLimits)
                storageDescription = "sqlite \(options.databasePath)"
            }
        } catch {
            throw .storage(error)
        }
        let looked = storage
        changeWaits = ChangeWaitRegistry(maximumWaitsPerUser: options.maximumChangeWaitsPerUser,
                                         maximumWaitMilliseconds: options.maximumChangeWaitMilliseconds) { user, cursors in
            // Storage that cannot answer: the device's own pull will hear why.
            (try? SyncRouter.hasChanges(in: looked, user: user, after: cursors)) ?? true
        }
        let router = SyncRouter(storage: storage, users: options.users, maximumBatchSize: options.maximumBatchSize,
                                changeWaits: changeWaits, log: log)
        http = HTTPServer(configuration: options.httpConfiguration, responder: router)
        operationPruner = RememberedOperationPruner(storage: storage, intervalMilliseconds: options.operationPruneIntervalMilliseconds,
                                                    batchSize: options.operationPruneBatchSize, log: log)
    }

    /// Starts hearing of committed pushes (waits for changes end on them),
    /// then listening and serving, and (with an operation retention) the
    /// background pruning of remembered operations.
    ///
    /// ```swift
    /// try server.start()
    /// ```
    ///
    /// - Throws: ``SyncServerError/socket(_:)`` when the address cannot be listened on.
    public func start() throws(SyncServerError) {
        // A push builds and drops blocks of megabytes on whichever worker
        // runs it: served by mappings of their own, they go back to the
        // system when dropped instead of staying in that worker's heap.
        LargeAllocations.returnToSystem(from: SyncRouter.largeBodyThreshold)
        let waits = changeWaits
        storage.observeChanges { change in waits.wake(change) }
        do throws(SocketError) { try http.start() } catch {
            storage.stopObservingChanges()
            throw .socket(error)
        }
        // The same thread collects attachments, so it runs whenever the storage keeps them.
        if options.operationRetention != nil || storage is any AttachmentStorage { operationPruner.start() }
    }

    /// The port listened on.
    ///
    /// ```swift
    /// let base = "http://127.0.0.1:\(server.port)"
    /// ```
    public var port: Int { http.port }

    /// The line the tool prints when ready (tests wait for it).
    ///
    /// ```swift
    /// print(server.readyLine)
    /// ```
    public var readyLine: String {
        let host = options.host.contains(":") ? "[\(options.host)]" : options.host
        let line = "sync-server listening on http://\(host):\(port) (\(storageDescription))"
        guard options.developmentMode else { return line }
        return line + " DEVELOPMENT MODE: no users given, token \"\(SyncServerOptions.developmentToken)\" "
            + "is user \"\(SyncServerOptions.developmentUser)\" (loopback only)"
    }

    /// Stops accepting, finishes requests in flight, closes every connection
    /// and then the database's.
    ///
    /// ```swift
    /// server.shutdown()
    /// ```
    public func shutdown() {
        operationPruner.stop()
        http.shutdown()
        storage.stopObservingChanges()
        storage.closeConnections()
    }
}

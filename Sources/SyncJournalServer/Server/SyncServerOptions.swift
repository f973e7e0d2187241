import SyncJournalProtocol

/// Everything `sync-server` is started with.
///
/// ```swift
/// var options = SyncServerOptions()
/// options.port = 0
/// options.databasePath = "/tmp/test.sqlite"
/// try options.users.add(token: "t1", user: "alice")
/// ```
public struct SyncServerOptions: Sendable {
    /// The address to listen on.
    public var host = "127.0.0.1"
    /// The port (0: any free port).
    public var port = 8787
    /// The SQLite database file (created if missing); unused when ``postgresConnection`` is set.
    public var databasePath = "./sync-server.sqlite"
    /// A libpq connection string or URI: when set, rows live in that
    /// PostgreSQL database (``PostgreSQLStorage``, tables created if missing)
    /// instead of the SQLite file, and several servers may share it.
    public var postgresConnection: String?
    /// Whether PostgreSQL connections prepare the statements they run again
    /// (`--postgres-prepared-statements`); on by default.
    public var postgresPreparesStatements = true
    /// Tokens and their users.
    public var users = UserDirectory()
    /// The largest request body taken (413 above).
    public var maximumBodyBytes = 8 * 1024 * 1024
    /// The most mutations one push may carry (413 above).
    public var maximumBatchSize = ProtocolLimits.maximumMutationsPerPush
    /// The most connections served at once (503 above; `--max-connections`).
    public var maximumConnections = 20_000
    /// The most connections from one peer address (503 above; `--max-connections-per-address`).
    public var maximumConnectionsPerAddress = 256
    /// How long a request head may take from its first byte, or from the
    /// connection's start (408 after; `--header-timeout`).
    public var headerTimeoutMilliseconds = 10_000
    /// How long a kept-alive connection may stay silent between requests (`--idle-timeout`).
    public var idleTimeoutMilliseconds = 60_000
    /// Threads that run storage calls (`--workers`).
    public var workerThreads = 16
    /// The most requests of one user handed to storage at once; more wait
    /// their turn, users take turns (`--max-user-requests`).
    public var maximumConcurrentRequestsPerUser = 4
    /// The most body bytes of one user's requests in flight (429 above; `--user-body-budget`).
    public var maximumBodyBytesInFlightPerUser = 32 * 1024 * 1024
    /// How long tombstones are kept before pulls purge them (`nil`: for ever).
    /// A client whose cursor is behind a purged tombstone is told to resync (410).
    public var tombstoneRetentionMilliseconds: Int64?
    /// How long applied operation ids are remembered before the background
    /// pruning forgets them (`nil`: for ever; `--operation-retention-days`,
    /// default 30 days). A mutation no longer remembered is judged by its
    /// `queuedAt` (journals/PROTOCOL.md, "Remembered operations").
    package var operationRetention: OperationRetention? = OperationRetention(days: OperationRetention.defaultDays)
    /// The largest attachment content the server takes, in bytes
    /// (`--max-attachment-bytes`, default 1 GiB; 413 `too_large` above).
    public var maximumAttachmentBytes: Int64 = 1 << 30
    /// Per user, the bytes of the contents they uploaded whole plus their
    /// unfinished uploads' declared sizes (`--attachment-quota-bytes`,
    /// default 10 GiB; 413 `quota_exceeded` past it).
    public var attachmentQuotaBytes: Int64 = 10 << 30
    /// How long a content no live row refers to is kept after its last
    /// upload, and an untouched unfinished upload (`--attachment-grace-seconds`,
    /// default 7 days); collected with the server's other upkeep.
    public var attachmentGraceMilliseconds: Int64 = 604_800_000
    /// The attachment limits as the storages take them.
    package var attachmentLimits: AttachmentLimits {
        AttachmentLimits(maximumContentBytes: maximumAttachmentBytes, quotaBytes: attachmentQuotaBytes, graceMilliseconds: attachmentGraceMilliseconds)
    }
    /// The pause between two rounds of pruning remembered operations.
    public var operationPruneIntervalMilliseconds = 60_000
    /// The most remembered operations one pruning transaction forgets.
    public var operationPruneBatchSize = 1_000
    /// The longest a wait for changes (`POST /v1/sync/wait`) is held before
    /// it is answered `{"changed": false}`; a request asking for longer is
    /// held this long (`--max-wait-seconds`).
    public var maximumChangeWaitMilliseconds: Int64 = 60_000
    /// The most waits for changes one user may hold at once; more are
    /// answered 429 (`--max-user-waits`).
    public var maximumChangeWaitsPerUser = 16
    /// Whether ``developmentToken`` was added because no users were given on
    /// a loopback address (the ready line says so).
    public var developmentMode = false

    /// The token a `sync-server` started with no users on a loopback address
    /// accepts, as user ``developmentUser``: `swift run sync-server` and
    /// `swift run sync-demo --server http://127.0.0.1:8787` work with no flags.
    public static let developmentToken = "dev-token"
    /// The user ``developmentToken`` stands for.
    public static let developmentUser = "dev"

    /// Whether `host` is a loopback address (only there may development mode start).
    ///
    /// ```swift
    /// SyncServerOptions.isLoopback("127.0.0.1")   // true
    /// SyncServerOptions.isLoopback("0.0.0.0")     // false
    /// ```
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The defaults: 127.0.0.1:8787, `./sync-server.sqlite`, no users.
    ///
    /// ```swift
    /// let options = SyncServerOptions()
    /// ```
    public init() {}

    /// The HTTP configuration these options make.
    ///
    /// ```swift
    /// let configuration = options.httpConfiguration
    /// ```
    public var httpConfiguration: HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration(host: host, port: port)
        configuration.maximumBodyBytes = maximumBodyBytes
        configuration.maximumConnections = maximumConnections
        configuration.maximumConnectionsPerAddress = maximumConnectionsPerAddress
        configuration.headerTimeoutMilliseconds = headerTimeoutMilliseconds
        configuration.idleTimeoutMilliseconds = idleTimeoutMilliseconds
        configuration.workerThreads = workerThreads
        configuration.maximumConcurrentRequestsPerOwner = maximumConcurrentRequestsPerUser
        configuration.maximumBodyBytesInFlightPerOwner = maximumBodyBytesInFlightPerUser
        return configuration
    }
}

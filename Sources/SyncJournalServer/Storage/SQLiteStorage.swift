import SyncJournalPlatform
import SyncJournalProtocol

/// ``SyncStorage`` in one SQLite file (WAL mode, `synchronous=FULL`), with
/// ``ReferenceServer``'s semantics for a server that remembers operation ids.
///
/// - Every push is one `begin immediate` transaction: its stamps, rows and
///   remembered operation ids are committed (and synced) together before the
///   results are returned, or none of it is.
/// - Stamps: `max(now, last + 1)` read and updated in that transaction, so
///   they are strictly increasing in commit order; a pull's snapshot holds a
///   prefix of them, and any later write sorts after everything it saw.
/// - Connections come from a ``SQLiteConnectionPool`` (readers in parallel,
///   one writer at a time; see there for why).
/// - The database's ``identity`` is made with its schema; a push or pull
///   whose expectation names another, or a stamp past the `stamp` counter
///   (which only grows, purges included), is refused inside the
///   transaction that would apply or read it.
///
/// ```swift
/// let storage = try SQLiteStorage(path: "./sync-server.sqlite")
/// let results = try storage.push(user: "u1", [mutation])
/// ```
public final class SQLiteStorage: SyncStorage {
    /// The database file.
    public let path: String
    private let pool: SQLiteConnectionPool
    /// Taken by every write transaction of this process (see ``transaction(immediate:_:)``).
    private let writerGate = Mutex(())
    let now: @Sendable () -> Int64
    /// How long tombstones are kept (`nil`: until purged by hand).
    public let tombstoneRetentionMilliseconds: Int64?
    /// When retention purges run (`nil`: no retention).
    private let retentionSchedule: TombstoneRetentionSchedule?
    /// How long applied operation ids are remembered (`nil`: for ever).
    package let operationRetention: OperationRetention?
    /// Who hears of committed pushes (``observeChanges(_:)``); one process
    /// writes the file, so telling it after the commit is enough.
    private let changeObserver = Mutex<(@Sendable (StorageChange) -> Void)?>(nil)
    /// The database's identity, read when it is opened (one process writes
    /// the file: nothing else changes it while this storage is open).
    private let identityHolder = Mutex<ServerIdentity?>(nil)
    /// Whether a user exists, for adding members (see ``init(path:busyTimeoutMilliseconds:tombstoneRetentionMilliseconds:operationRetention:knownUsers:attachmentLimits:clock:)``).
    private let knownUsers: @Sendable (String) -> Bool
    /// The attachment bytes beside the database (`<path>.attachments/`).
    let attachmentFiles: AttachmentFiles
    /// The largest content, the per-user quota and the collection grace.
    package let attachmentLimits: AttachmentLimits
    /// The uploads a request is writing now: a second request for the same
    /// upload is answered `wrong_offset` at once rather than racing the first
    /// for the same bytes of its file (one process writes the database).
    let uploadsBeingWritten = Mutex(Set<UploadKey>())
    /// Taken while a content's file is put in place or collected, so a
    /// collection never removes the file of a content an upload has just stored.
    let contentFilesGate = Mutex(())

    /// The most rows one pull may ask for (journals/PROTOCOL.md).
    ///
    /// ```swift
    /// let limit = min(requested, SQLiteStorage.maximumPullLimit)
    /// ```
    public static let maximumPullLimit = ProtocolLimits.maximumPullLimit

    /// Opens (or creates) the database at `path` and its tables.
    ///
    /// ```swift
    /// let storage = try SQLiteStorage(path: "/tmp/test.sqlite", clock: { 1_764_000_000_000 })
    /// ```
    ///
    /// - Parameters:
    ///   - tombstoneRetentionMilliseconds: when set, pulls purge tombstones
    ///   stamped more than this before the clock (as ``ReferenceServer``'s
    ///   retention does), at most once a minute.
    ///   - operationRetention: when set, operations remembered longer than it
    ///   ago are forgotten by ``pruneRememberedOperations(limit:)``, and a
    ///   mutation not remembered is judged by its `queuedAt` (see
    ///   ``OperationRetention``); `nil` remembers every operation for ever.
    ///   - clock: the time stamps start from, in milliseconds (the wall clock
    ///   by default); stamps still increase when it stands still or goes back.
    ///   Remembered operations are dated and pruned by it too.
    ///   - knownUsers: whether a user exists, so a membership change may add
    ///   them (else ``SpaceRefusal/unknownUser(_:)``); `sync-server` passes
    ///   its user directory's. The default knows every user name the
    ///   directory could hold (1 to 128 bytes of UTF-8 without U+0000).
    ///   - attachmentLimits: the largest attachment content, the per-user
    ///   quota and how long unreferenced contents and untouched uploads are
    ///   kept (`sync-server`'s `--max-attachment-bytes`,
    ///   `--attachment-quota-bytes`, `--attachment-grace-seconds`).
    /// - Throws: ``StorageError/sqlite(_:)`` when the file cannot be opened or
    ///   set up, ``StorageError/corrupt(table:key:reason:)`` for a schema of
    ///   another version or a stored identity that is not one.
    package init(path: String = "./sync-server.sqlite", busyTimeoutMilliseconds: Int32 = 5_000,
                tombstoneRetentionMilliseconds: Int64? = nil, operationRetention: OperationRetention? = nil,
                knownUsers: @escaping @Sendable (String) -> Bool = UserDirectory.isPossibleUser,
                attachmentLimits: AttachmentLimits = .standard,
                clock: @escaping @Sendable () -> Int64 = SQLiteStorage.wallClockMilliseconds) throws(StorageError) {
        self.path = path
        self.attachmentLimits = attachmentLimits
        attachmentFiles = AttachmentFiles(databasePath: path)
        self.knownUsers = knownUsers
        self.now = clock
        self.operationRetention = operationRetention
        self.tombstoneRetentionMilliseconds = tombstoneRetentionMilliseconds.map { max(0, $0) }
        retentionSchedule = tombstoneRetentionMilliseconds.map { TombstoneRetentionSchedule(retentionMilliseconds: $0) }
        pool = SQLiteConnectionPool(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds) { database throws(SQLiteError) in
            try database.execute("pragma journal_mode = WAL")
            // FULL: a commit is synced before push returns, so an acknowledged mutation survives a power cut.
            try database.execute("pragma synchronous = FULL")
        }
        let identity = try migrate()
        identityHolder.withLock { $0 = identity }
        try recoverAttachmentFiles()
    }

    /// The database's identity (journals/PROTOCOL.md, "Server identity"),
    /// made with its schema and carried by every reply.
    ///
    /// ```swift
    /// print(storage.identity?.description ?? "none")
    /// ```
    public var identity: ServerIdentity? { identityHolder.withLock { $0 } }

    /// Gives the database a new random identity (or `identity`) and returns
    /// it: the operator's step after restoring a backup, so every device
    /// finds a different server and reconciles (`sync-server --new-identity`).
    ///
    /// ```swift
    /// let fresh = try storage.replaceIdentity()
    /// ```
    @discardableResult
    package func replaceIdentity(with identity: ServerIdentity = .random()) throws(StorageError) -> ServerIdentity {
        try transaction(immediate: true) { (_, queries) throws(StorageError) in try queries.setIdentity(identity) }
        identityHolder.withLock { $0 = identity }
        return identity
    }

    /// Milliseconds since 1970 from the system's real-time clock.
    ///
    /// ```swift
    /// let now = SQLiteStorage.wallClockMilliseconds()
    /// ```
    @Sendable public static func wallClockMilliseconds() -> Int64 { SystemClock.wallClockMilliseconds() }

    private func migrate() throws(StorageError) -> ServerIdentity {
        try transaction(immediate: true) { (database, queries) throws(StorageError) in
            let version: Int64
            do throws(SQLiteError) {
                version = try database.withStatement("pragma user_version") { statement throws(SQLiteError) in
                    try statement.step() ? statement.int64(0) : 0
                }
            } catch {
                throw StorageError(sqlite: error)
            }
            guard (0...StorageSchema.version).contains(version) else {
                throw .corrupt(table: "user_version", key: path, reason: "schema version \(version), this server knows 1 to \(StorageSchema.version)")
            }
            do throws(SQLiteError) {
                if version == 1 {
                    let upgradedAt = now()
                    try database.execute(StorageSchema.sqliteFromVersion1)
                    try database.withStatement(StorageSchema.sqliteDateVersion1Operations) { statement throws(SQLiteError) in
                        statement.bind(1, upgradedAt)
                        _ = try statement.step()
                    }
                }
                if version == 1 || version == 2 { try database.execute(StorageSchema.sqliteFromVersion2) }
                if (1...3).contains(version) { try database.execute(StorageSchema.sqliteFromVersion3) }
                if (1...5).contains(version) {
                    if try !Self.hasColumn(database, table: "rows", column: "space") { try database.execute(StorageSchema.sqliteFromVersion5) }
                    if try !Self.hasColumn(database, table: "horizons", column: "space") { try database.execute(StorageSchema.sqliteHorizonsBySpace) }
                    if try !Self.hasColumn(database, table: "operations", column: "space") {
                        try database.execute(StorageSchema.sqliteOperationsSpace)
                    }
                }
                try database.execute(StorageSchema.sqlite)
                // A new database, or one from before identities, gets one now.
                try database.withStatement(StorageSchema.sqliteIdentity) { statement throws(SQLiteError) in
                    statement.bind(1, ServerIdentity.random().text)
                    _ = try statement.step()
                }
                try database.execute("pragma user_version = \(StorageSchema.version)")
            } catch {
                throw StorageError(sqlite: error)
            }
            return try queries.identity()
        }
    }

    /// Whether `table` has `column` (an upgrade adds a column once).
    private static func hasColumn(_ database: SQLiteDatabase, table: String, column: String) throws(SQLiteError) -> Bool {
        try database.withStatement("select count(*) from pragma_table_info(?1) where name = ?2") { statement throws(SQLiteError) in
            statement.bind(1, table)
            statement.bind(2, column)
            return try statement.step() && statement.int64(0) > 0
        }
    }

    /// Runs `body` in one transaction on a pooled connection.
    ///
    /// A write transaction first takes ``writerGate``: SQLite lets one
    /// writer in at a time and makes the others poll for its lock with
    /// growing sleeps, so under load a push could lose to the pruner and to
    /// other pushes again and again until its busy timeout (a 503). Waiting
    /// here instead, on a lock that wakes the next writer when it is
    /// released, keeps SQLite's lock free of contention within the process.
    func transaction<T>(immediate: Bool,
                                _ body: (SQLiteDatabase, StorageTransaction) throws(StorageError) -> T) throws(StorageError) -> T {
        if immediate {
            return try writerGate.withLock { (_: inout Void) throws(StorageError) -> T in
                try pooledTransaction(immediate: true, body)
            }
        }
        return try pooledTransaction(immediate: false, body)
    }

    /// Runs `body` in one write transaction, as pushes do (see ``transaction(immediate:_:)``).
    func writeTransaction<T>(_ body: (StorageTransaction) throws(StorageError) -> T) throws(StorageError) -> T {
        try transaction(immediate: true) { (_, queries) throws(StorageError) in try body(queries) }
    }

    /// Tells the change observer, if any, of a committed push.
    func notifyObserver(_ change: StorageChange) {
        changeObserver.withLock({ $0 })?(change)
    }

    private func pooledTransaction<T>(immediate: Bool,
                                      _ body: (SQLiteDatabase, StorageTransaction) throws(StorageError) -> T) throws(StorageError) -> T {
        let now = self.now
        do {
            return try pool.withConnection { database throws(SQLiteTransactionFailure<StorageError>) in
                try database.transaction(immediate: immediate) { () throws(StorageError) in
                    try body(database, StorageTransaction(database: database, now: now))
                }
            }
        } catch {
            switch error {
            case .open(let failure): throw StorageError(sqlite: failure)
            case .body(.database(let failure)): throw StorageError(sqlite: failure)
            case .body(.body(let failure)): throw failure
            }
        }
    }

    /// Closes the idle connections (the last one to close checkpoints the
    /// WAL into the database file). Later calls open new ones.
    ///
    /// ```swift
    /// storage.closeConnections()
    /// ```
    public func closeConnections() { pool.closeIdle() }

    // MARK: Push

    /// Applies `mutations` in order in one transaction (see ``SyncStorage/push(user:_:)``).
    ///
    /// ```swift
    /// let results = try storage.push(user: "u1", [mutation])
    /// ```
    public func push(user: String, _ mutations: [Mutation]) throws(StorageError) -> [MutationResult] {
        try push(user: user, mutations, expecting: nil)
    }

    /// Applies `mutations` in order in one transaction, if this is the
    /// server `expectation` names and it is not behind it (see
    /// ``SyncStorage/push(user:_:expecting:)``).
    ///
    /// ```swift
    /// let results = try storage.push(user: "u1", [mutation], expecting: ServerExpectation(identity: known, seenStamp: seen))
    /// ```
    public func push(user: String, _ mutations: [Mutation], expecting expectation: ServerExpectation?) throws(StorageError) -> [MutationResult] {
        let results = try apply(user: user, mutations, expecting: expectation)
        // Committed: waits for this user's changes, and for the spaces it wrote into, may end now.
        for change in StorageChange.changes(user: user, results: results) { notifyObserver(change) }
        return results
    }

    /// Calls `observer` after each committed push that applied rows (see ``SyncStorage/observeChanges(_:)``).
    ///
    /// ```swift
    /// storage.observeChanges { change in print(change) }
    /// ```
    public func observeChanges(_ observer: @escaping @Sendable (StorageChange) -> Void) {
        changeObserver.withLock { $0 = observer }
    }

    /// Stops calling the observer.
    ///
    /// ```swift
    /// storage.stopObservingChanges()
    /// ```
    public func stopObservingChanges() {
        changeObserver.withLock { $0 = nil }
    }

    private func apply(user: String, _ mutations: [Mutation], expecting expectation: ServerExpectation?) throws(StorageError) -> [MutationResult] {
        let retention = operationRetention
        let identity = self.identity
        return try transaction(immediate: true) { (_, queries) throws(StorageError) in
            // Under the write lock: no push can move the counter between this look and the writes.
            try Self.refuseUnexpected(expectation, identity: identity, queries)
            // One server time per push: it dates what the push remembers and judges what it does not.
            let pushedAt = now()
            var results: [MutationResult] = []
            results.reserveCapacity(mutations.count)
            for mutation in mutations {
                if let first = try queries.remembered(owner: user, operationID: mutation.operationID) {
                    results.append(MutationResult(operationID: mutation.operationID, outcome: .applied(first)))
                    continue
                }
                let forgotten = retention?.mayBeForgotten(mutation, at: pushedAt) ?? false
                let outcome = try StorageRules.apply(mutation, user: user, mayBeForgotten: forgotten, queries)
                // Only an applied result changed anything; a refusal is judged afresh on a resend.
                if case .applied(let row) = outcome {
                    try queries.remember(owner: user, operationID: mutation.operationID, row: row, at: pushedAt)
                }
                results.append(MutationResult(operationID: mutation.operationID, outcome: outcome))
            }
            return results
        }
    }

    // MARK: Remembered operations

    /// Forgets at most `limit` operations remembered longer than
    /// ``operationRetention`` ago, oldest first, in one short write
    /// transaction (see ``SyncStorage/pruneRememberedOperations(limit:)``).
    ///
    /// ```swift
    /// while try storage.pruneRememberedOperations(limit: 1_000) == 1_000 {}
    /// ```
    @discardableResult
    public func pruneRememberedOperations(limit: Int) throws(StorageError) -> Int {
        guard let retention = operationRetention, limit > 0 else { return 0 }
        return try transaction(immediate: true) { (_, queries) throws(StorageError) in
            try queries.forgetOperations(rememberedBefore: retention.pruneBefore(now: now()), limit: limit)
        }
    }

    // MARK: Pull

    /// One page of `user`'s rows (see ``SyncStorage/pull(user:_:)``).
    ///
    /// ```swift
    /// let page = try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 500))
    /// ```
    public func pull(user: String, _ request: PullRequest) throws(StorageError) -> PullPage {
        do throws(PullRefusal) { try StorageRules.validate(request, maximumLimit: Self.maximumPullLimit) } catch { throw StorageError(error) }
        applyRetention()
        let identity = self.identity
        // A deferred transaction: one snapshot for the counter, the horizons and every kind's rows.
        return try transaction(immediate: false) { (_, queries) throws(StorageError) in
            try Self.refuseUnexpected(request.expectation, identity: identity, queries)
            var page = try StorageRules.page(user: user, request, queries)
            page.server = identity
            return page
        }
    }

    /// Refuses a request that expects another server or one further along:
    /// the stamp counter is every user's latest stamp (one counter orders
    /// them all), at or above every stamp and cursor ever handed out.
    static func refuseUnexpected(_ expectation: ServerExpectation?, identity: ServerIdentity?,
                                         _ queries: StorageTransaction) throws(StorageError) {
        guard let expectation else { return }
        if let mismatch = StorageRules.mismatch(of: expectation, identity: identity, latestStamp: try queries.lastStamp()) {
            throw .serverMismatch(mismatch)
        }
    }

    /// Purges tombstones past the retention, unless a purge ran within the
    /// last minute. Best effort: a failed purge (say, the database is busy)
    /// leaves the tombstones for the next one and does not fail the pull.
    private func applyRetention() {
        guard let limit = retentionSchedule?.purgeLimit(at: now()) else { return }
        _ = try? purgeTombstones(olderThan: limit, kind: nil)
    }

    // MARK: Read

    /// The live row of `user` (see ``SyncStorage/read(user:kind:id:)``).
    ///
    /// ```swift
    /// let row = try storage.read(user: "u1", kind: "pin", id: "p1")
    /// ```
    public func read(user: String, kind: String, id: String) throws(StorageError) -> ServerRow? {
        try read(user: user, RecordKey(kind: kind, id: id))
    }

    /// The live row under `key` as `user` sees it (see ``SyncStorage/read(user:_:)``).
    ///
    /// ```swift
    /// let pin = try storage.read(user: "kid", RecordKey(kind: "pin", id: "p1", space: trip))
    /// ```
    public func read(user: String, _ key: RecordKey) throws(StorageError) -> ServerRow? {
        try transaction(immediate: false) { (_, queries) throws(StorageError) in try StorageRules.read(key, user: user, queries) }
    }

    // MARK: Spaces

    /// Applies one membership change in one write transaction (see ``SyncStorage/change(user:_:)``).
    ///
    /// ```swift
    /// let space = try storage.change(user: "dad", .create(SpaceID.random(), name: "Weekend pins"))
    /// ```
    @discardableResult
    public func change(user: String, _ change: SpaceChange) throws(StorageError) -> Space? {
        if let problem = SpaceRules.problem(in: change) { throw .badRequest(problem) }
        let isKnown = knownUsers
        let space = try transaction(immediate: true) { (_, queries) throws(StorageError) in
            try SpaceRules.apply(change, user: user, isKnown: isKnown, queries)
        }
        notifyObserver(.membershipChanged(change.space, users: change.changedUsers(by: user)))
        return space
    }

    /// Every shared space `user` is a member of (see ``SyncStorage/spaces(user:)``).
    ///
    /// ```swift
    /// let spaces = try storage.spaces(user: "kid")
    /// ```
    public func spaces(user: String) throws(StorageError) -> [Space] {
        try transaction(immediate: false) { (_, queries) throws(StorageError) in try SpaceRules.spaces(of: user, queries) }
    }

    // MARK: Tombstones

    /// Purges tombstones stamped before `stamp` (see ``SyncStorage/purgeTombstones(olderThan:kind:)``).
    ///
    /// ```swift
    /// try storage.purgeTombstones(olderThan: SQLiteStorage.wallClockMilliseconds() - 86_400_000, kind: "pin")
    /// ```
    @discardableResult
    public func purgeTombstones(olderThan stamp: Int64, kind: String? = nil) throws(StorageError) -> Int {
        try transaction(immediate: true) { (_, queries) throws(StorageError) in
            let purged = try queries.tombstones(before: stamp, kind: kind)
            // Per space (empty: the personal spaces together) and kind, the last tombstone purged.
            var latest: [String: [String: PullCursor]] = [:]
            for tombstone in purged {
                try queries.deleteRow(tombstone)
                if latest[tombstone.space]?[tombstone.kind].map({ $0 < tombstone.position }) ?? true {
                    latest[tombstone.space, default: [:]][tombstone.kind] = tombstone.position
                }
            }
            for (space, kinds) in latest {
                let id = try StorageTransaction.space(space, table: "rows", key: space)
                for (kind, position) in kinds {
                    let current = try queries.horizon(kind: kind, in: id)
                    if current.map({ $0 < position }) ?? true { try queries.setHorizon(kind: kind, in: space, position) }
                }
            }
            return purged.count
        }
    }
}

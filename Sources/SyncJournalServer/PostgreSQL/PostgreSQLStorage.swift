import SyncJournalPlatform
import SyncJournalProtocol

/// ``SyncStorage`` in a PostgreSQL database that several `sync-server`
/// processes may share, with ``ReferenceServer``'s semantics (the same as
/// ``SQLiteStorage``; journals/PROTOCOL.md, "Appendix: server storage").
///
/// - Every push is one `read committed` transaction whose first statement
///   locks the pushing user's stamp row; that user's stamps are
///   `greatest(last + 1, now)` taken under that lock, so they increase in
///   that user's commit order across every server, while pushes of other
///   users run at the same time (see ``PostgreSQLTransaction/lockStamps(owner:)``).
/// - A push reads its remembered operation ids in one statement and the rows
///   it names in another, applies its mutations in order in memory
///   (``PostgreSQLPushBatch``), and writes every changed row, every applied
///   operation and the user's last stamp in one more. A push of ordinary
///   size takes three round trips to the database: its `begin`, lock and
///   both reads go in one pipeline, then the write, then the commit (see
///   ``PostgreSQLConnection/pipeline(_:)``). Its change notification is
///   sent apart, with those of other pushes (``PostgreSQLChangeAnnouncer``).
/// - A pull is one `repeatable read, read only` transaction: one snapshot.
/// - The database's ``identity`` is made with its schema and read when the
///   storage opens (`sync-server --new-identity` runs with the servers
///   stopped). A push whose expectation names another, or a stamp past the
///   user's counter, is refused under the user's stamp lock, before
///   anything is applied; a pull, inside its snapshot.
/// - Connections come from a ``PostgreSQLConnectionPool``; a broken one is
///   dropped and the call runs again on a new one.
/// - Failures worth retrying (a lost connection, a serialization failure or
///   deadlock, a unique violation from a racing resend) roll back and run the
///   whole call again, at most `maximumAttempts` times; then a lost
///   connection or serialization failure is ``StorageError/unavailable(reason:)``
///   (503) and anything else ``StorageError/postgres(_:)`` (500). Running a
///   push again is safe even when the lost connection hid a commit: its
///   operation ids are remembered, so the rerun answers the first results.
/// - PostgreSQL `text` cannot hold U+0000; the protocol forbids it in kinds
///   and record ids for every backend (``ProtocolLimits``), so such a
///   mutation is rejected permanently before any statement.
///
/// ```swift
/// let storage = try PostgreSQLStorage(connection: "host=127.0.0.1 port=5432 dbname=sync")
/// let results = try storage.push(user: "u1", [mutation])
/// ```
public final class PostgreSQLStorage: SyncStorage {
    /// The connection string without its password (for logs and the ready line).
    public let redactedConnection: String
    private let pool: PostgreSQLConnectionPool
    /// The stamp clock, or `nil` for the database server's clock.
    let now: (@Sendable () -> Int64)?
    /// How long applied operation ids are remembered (`nil`: for ever).
    package let operationRetention: OperationRetention?
    /// The largest attachment content, the per-user quota and the collection grace.
    package let attachmentLimits: AttachmentLimits
    private let maximumAttempts: Int
    /// How long tombstones are kept (`nil`: until purged by hand).
    public let tombstoneRetentionMilliseconds: Int64?
    /// When retention purges run (`nil`: no retention).
    private let retentionSchedule: TombstoneRetentionSchedule?
    /// The listener of committed pushes while changes are observed.
    let changeNotifications: PostgreSQLChangeNotifications
    /// Sends the notifications of committed pushes, gathered in rounds.
    let announcer: PostgreSQLChangeAnnouncer
    /// The database's identity, read when the storage opens.
    private let identityHolder = Mutex<ServerIdentity?>(nil)
    /// Whether a user exists, for adding members (``SpaceRefusal/unknownUser(_:)`` otherwise).
    private let knownUsers: @Sendable (String) -> Bool

    /// Connects to the database `connection` names and creates the tables if missing.
    ///
    /// ```swift
    /// let storage = try PostgreSQLStorage(connection: "postgresql://sync@db.internal/sync", clock: { 1_764_000_000_000 })
    /// ```
    ///
    /// - Parameters:
    ///   - connection: a libpq connection string or URI.
    ///   - lockTimeoutMilliseconds: how long a push waits for its user's stamp lock
    ///   (`lock_timeout`) before it fails as unavailable (503).
    ///   - maximumAttempts: how often a call runs before a retryable failure is given up.
    ///   - tombstoneRetentionMilliseconds: when set, pulls purge tombstones
    ///   stamped more than this before now, at most once a minute.
    ///   - operationRetention: when set, operations remembered longer than it
    ///   ago are forgotten by ``pruneRememberedOperations(limit:)``, and a
    ///   mutation not remembered is judged by its `queuedAt` (see
    ///   ``OperationRetention``); `nil` remembers every operation for ever.
    ///   - knownUsers: whether a user exists, so a membership change may add
    ///   them (as for ``SQLiteStorage``; `sync-server` passes its user directory's).
    ///   - clock: the time stamps start from, in milliseconds; `nil` (the
    ///   default) uses the database server's clock, one clock for every server
    ///   process. Stamps still increase when it stands still or goes back.
    ///   Remembered operations are dated and pruned by it too.
    ///   - preparesStatements: whether connections prepare the statements
    ///   they run again (the default); turn it off behind a pooler that moves
    ///   a connection between server sessions (PgBouncer's transaction mode before 1.21).
    /// - Throws: ``StorageError/unavailable(reason:)`` when the database cannot
    ///   be reached, ``StorageError/postgres(_:)`` when the tables cannot be
    ///   made, ``StorageError/corrupt(table:key:reason:)`` for a schema of another version.
    package init(connection: String, lockTimeoutMilliseconds: Int = 5_000, maximumAttempts: Int = 3,
                tombstoneRetentionMilliseconds: Int64? = nil, operationRetention: OperationRetention? = nil,
                knownUsers: @escaping @Sendable (String) -> Bool = UserDirectory.isPossibleUser,
                clock: (@Sendable () -> Int64)? = nil, preparesStatements: Bool = true,
                attachmentLimits: AttachmentLimits = .standard) throws(StorageError) {
        self.knownUsers = knownUsers
        self.attachmentLimits = attachmentLimits
        self.operationRetention = operationRetention
        let lockTimeout = max(1, lockTimeoutMilliseconds)
        pool = PostgreSQLConnectionPool(connection: connection, preparesStatements: preparesStatements) { connection throws(PostgreSQLError) in
            // A number, not user data; `set` takes no parameters.
            try connection.execute("set lock_timeout = \(lockTimeout)")
            // An abandoned transaction must not hold a stamp lock for ever.
            try connection.execute("set idle_in_transaction_session_timeout = 60000")
        }
        redactedConnection = pool.redactedConnection
        changeNotifications = PostgreSQLChangeNotifications(connection: connection)
        announcer = PostgreSQLChangeAnnouncer { [pool] payloads throws(PostgreSQLError) in
            _ = try pool.withDatabaseConnection { connection throws(PostgreSQLError) in
                try connection.execute(PostgreSQLChangeNotice.notifyStatement, [.text(PostgreSQLChangeNotice.channel), .textArray(payloads)])
            }
        }
        now = clock
        self.maximumAttempts = max(1, maximumAttempts)
        self.tombstoneRetentionMilliseconds = tombstoneRetentionMilliseconds.map { max(0, $0) }
        retentionSchedule = tombstoneRetentionMilliseconds.map { TombstoneRetentionSchedule(retentionMilliseconds: $0) }
        try migrate()
        let identity = try storedIdentity()
        identityHolder.withLock { $0 = identity }
    }

    deinit { announcer.stop() }

    /// The database's identity (journals/PROTOCOL.md, "Server identity"),
    /// made with its schema and carried by every reply.
    ///
    /// ```swift
    /// print(storage.identity?.description ?? "none")
    /// ```
    public var identity: ServerIdentity? { identityHolder.withLock { $0 } }

    /// Gives the database a new random identity (or `identity`) and returns
    /// it: the operator's step after restoring a backup, with every server
    /// on the database stopped (each reads the identity when it starts), so
    /// every device finds a different server and reconciles
    /// (`sync-server --new-identity`).
    ///
    /// ```swift
    /// let fresh = try storage.replaceIdentity()
    /// ```
    @discardableResult
    package func replaceIdentity(with identity: ServerIdentity = .random()) throws(StorageError) -> ServerIdentity {
        try transaction("begin") { queries throws(StorageError) in try queries.setIdentity(identity) }
        identityHolder.withLock { $0 = identity }
        return identity
    }

    /// The identity the database keeps.
    private func storedIdentity() throws(StorageError) -> ServerIdentity {
        try transaction("begin isolation level read committed read only") { queries throws(StorageError) in try queries.identity() }
    }

    /// The schema version the database records, or `nil` before its tables exist.
    private func storedSchemaVersion() throws(StorageError) -> Int64? {
        do throws(PostgreSQLError) {
            return try pool.withDatabaseConnection { connection throws(PostgreSQLError) -> Int64? in
                guard try connection.execute("select count(*)::int8 where to_regclass('storage_schema') is not null").int64(0, 0) == 1 else { return nil }
                let rows = try connection.execute("select version from storage_schema where \"only\" = 1")
                return rows.count == 1 ? try rows.int64(0, 0) : nil
            }
        } catch {
            throw StorageError(postgres: error)
        }
    }

    /// Creates the tables if missing and moves a database of schema version 1
    /// to ``PostgreSQLSchema/version`` (the new tables start empty; stored
    /// stamps stay). Servers of version 1 must be stopped first: they check
    /// the version only when they start.
    ///
    /// A database already at the current version is only read: the schema
    /// statements include an `alter table`, whose lock would queue behind
    /// every running push and hold up every later one, so a server starting
    /// beside busy ones would stall them.
    private func migrate() throws(StorageError) {
        if try storedSchemaVersion() == PostgreSQLSchema.version { return }
        try transaction("begin") { queries throws(StorageError) in
            do throws(PostgreSQLError) {
                try queries.connection.execute("select pg_advisory_xact_lock($1)", [.int64(PostgreSQLSchema.migrationLockKey)])
                for statement in PostgreSQLSchema.statements { try queries.connection.execute(statement) }
                // A new database, or one from before identities, gets one now.
                try queries.connection.execute(PostgreSQLSchema.insertIdentity, [.text(ServerIdentity.random().text)])
                let rows = try queries.connection.execute("select version from storage_schema where \"only\" = 1")
                let version = rows.count == 1 ? try rows.int64(0, 0) : 0
                guard PostgreSQLSchema.openableVersions.contains(version) else {
                    throw PostgreSQLError(sqlState: nil, message: "schema version \(version), this server knows \(PostgreSQLSchema.openableVersions)",
                                          context: "migrate", connection: redactedConnection)
                }
                if version < 3, let upgradedAt = now?() {
                    // Dated by the database's clock when the column was added; an injected clock dates them instead.
                    try queries.connection.execute("update operations set remembered_at = $1", [.int64(upgradedAt)])
                }
                if version < PostgreSQLSchema.version {
                    try queries.connection.execute("update storage_schema set version = $1 where \"only\" = 1", [.int64(PostgreSQLSchema.version)])
                }
            } catch {
                if error.sqlState == nil && !error.isConnectionFailure {
                    throw .corrupt(table: "storage_schema", key: redactedConnection, reason: error.message)
                }
                throw .postgres(error)
            }
        }
    }

    /// Runs `body` in one transaction on a pooled connection and ends it
    /// with `finish` (a plain commit unless given); retries retryable failures.
    ///
    /// - Parameter begin: the statement that opens the transaction, or `nil`
    ///   when `body` sends it itself (in a pipeline with its first reads).
    func transaction<T>(_ begin: String?,
                                finish: (PostgreSQLConnection, T) throws(PostgreSQLError) -> Void = { connection, _ throws(PostgreSQLError) in
                                    try connection.execute("commit")
                                },
                                _ body: (PostgreSQLTransaction) throws(StorageError) -> T) throws(StorageError) -> T {
        var attempt = 0
        while true {
            attempt += 1
            let failure: PostgreSQLError
            do {
                return try pool.withConnection { connection throws(StorageError) in
                    try Self.run(begin, on: connection, PostgreSQLTransaction(connection: connection, now: now), finish: finish, body)
                }
            } catch {
                switch error {
                case .connect(let connect): failure = connect
                case .body(.postgres(let postgres)): failure = postgres
                case .body(let other): throw other
                }
            }
            // A session the server ended (a restart, an administrator) rarely
            // ends alone: the idle ones are as likely gone, and each would
            // cost a retry to find out.
            if failure.isConnectionFailure { pool.closeIdle() }
            if failure.isRetryable && attempt < maximumAttempts { continue }
            throw StorageError(postgres: failure)
        }
    }

    private static func run<T>(_ begin: String?, on connection: PostgreSQLConnection, _ queries: PostgreSQLTransaction,
                               finish: (PostgreSQLConnection, T) throws(PostgreSQLError) -> Void,
                               _ body: (PostgreSQLTransaction) throws(StorageError) -> T) throws(StorageError) -> T {
        if let begin {
            do throws(PostgreSQLError) { try connection.execute(begin) } catch { throw .postgres(error) }
        }
        let result: T
        do {
            result = try body(queries)
        } catch {
            // Best effort: on a broken connection the server rolls back by itself.
            _ = try? connection.execute("rollback")
            throw error
        }
        do throws(PostgreSQLError) { try finish(connection, result) } catch {
            _ = try? connection.execute("rollback")
            throw .postgres(error)
        }
        return result
    }

    /// Sends the change notifications still queued (waiting at most 10 s),
    /// then closes the idle connections. Later calls open new ones.
    ///
    /// ```swift
    /// storage.closeConnections()
    /// ```
    public func closeConnections() {
        // A stopping server's last notifications go first, on a pooled connection.
        announcer.flush()
        pool.closeIdle()
    }

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
    /// server `expectation` names and the user's counter is not behind it
    /// (see ``SyncStorage/push(user:_:expecting:)``), judged under the
    /// user's stamp lock, so no push of the user slips in between.
    ///
    /// ```swift
    /// let results = try storage.push(user: "u1", [mutation], expecting: ServerExpectation(identity: known, seenStamp: seen))
    /// ```
    public func push(user: String, _ mutations: [Mutation], expecting expectation: ServerExpectation?) throws(StorageError) -> [MutationResult] {
        let identity = self.identity
        let operationIDs = mutations.map(\.operationID.description)
        let distinctOperationIDs = Array(Set(operationIDs))
        // What the shared rules refuse (past a limit, U+0000 that PostgreSQL
        // text cannot hold) is answered without reading its row.
        let refusals = mutations.map { StorageRules.refusal(of: $0) }
        let addresses = mutations.map { RowAddress(key: $0.key, owner: StorageRules.owner(in: $0.space, user: user)) }
        var named = Set<RowAddress>()
        var keys: [RowAddress] = []
        var spaces = Set<SpaceID>()
        for (index, mutation) in mutations.enumerated() where refusals[index] == nil {
            if named.insert(addresses[index]).inserted { keys.append(addresses[index]) }
            if !mutation.space.isPersonal { spaces.insert(mutation.space) }
        }
        // A small push of the personal space sends its begin, lock and reads
        // in one round trip; a large one, or one into shared spaces (whose
        // counters it locks too), sends them one by one and reads only the
        // rows its unremembered mutations name.
        let pipelined = spaces.isEmpty && Self.opensInOneRoundTrip(operationIDs: distinctOperationIDs.count, keys: keys)
        let begin = "begin isolation level read committed"
        return try transaction(pipelined ? nil : begin, finish: commitAnnouncing(user: user)) { queries throws(StorageError) in
            let opening: PostgreSQLPushOpening
            if pipelined {
                opening = try queries.openPush(begin: begin, owner: user, operationIDs: distinctOperationIDs, keys: keys)
            } else {
                let (last, databaseNow) = try queries.lockStamps(owner: user)
                // The spaces' counters after the user's, in id order: every push locks in that one order.
                let locked = try queries.lockSpaces(Array(spaces), user: user)
                let remembered = try queries.remembered(owner: user, operationIDs: distinctOperationIDs)
                // One pass over the push, not one per record: a large push names up to a thousand.
                let unrememberedKeys = Set(mutations.indices.lazy.filter { remembered[operationIDs[$0]] == nil }.map { addresses[$0] })
                let unremembered = keys.filter { unrememberedKeys.contains($0) }
                opening = PostgreSQLPushOpening(lastStamp: last, databaseNow: databaseNow, remembered: remembered,
                                                rows: try queries.rows(keys: unremembered), spaces: locked)
            }
            if let expectation {
                // The device may have pulled stamps of its spaces, past its
                // personal counter, and of spaces it has since left.
                var latest = opening.lastStamp
                if let seen = expectation.seenStamp, seen > latest { latest = max(latest, try queries.latestStamp(owner: user)) }
                if let seen = expectation.seenStamp, seen > latest { latest = max(latest, try queries.latestStampOfAnyone()) }
                if let mismatch = StorageRules.mismatch(of: expectation, identity: identity, latestStamp: latest) {
                    throw .serverMismatch(mismatch)
                }
            }
            var remembered = opening.remembered
            let databaseNow = opening.databaseNow
            let pushedAt = now?() ?? databaseNow
            let batch = PostgreSQLPushBatch(stored: opening.rows, lastStamp: opening.lastStamp, spaces: opening.spaces,
                                            clock: now.map { clock in { clock() } } ?? { databaseNow })
            // The contents the push refers to, judged once under the user's lock.
            let referred = mutations.indices.filter { refusals[$0] == nil && mutations[$0].op != .delete }
                .flatMap { AttachmentRules.contents(of: mutations[$0].fields) }
            for content in Set(referred) where try AttachmentRules.readableSize(of: content, user: user, queries) != nil {
                batch.readableContents.insert(content)
            }
            var results: [MutationResult] = []
            results.reserveCapacity(mutations.count)
            var applied: [(operationID: String, row: ServerRow)] = []
            for (index, mutation) in mutations.enumerated() {
                // A resend, or the same operation twice in one push: the first result.
                if let first = remembered[operationIDs[index]] {
                    results.append(MutationResult(operationID: mutation.operationID, outcome: .applied(first)))
                    continue
                }
                let outcome: MutationOutcome
                if let refusal = refusals[index] { outcome = refusal } else {
                    let forgotten = operationRetention?.mayBeForgotten(mutation, at: pushedAt) ?? false
                    outcome = try StorageRules.applyWithinLimits(mutation, user: user, mayBeForgotten: forgotten, batch)
                }
                // Only an applied result changed anything; a refusal is judged afresh on a resend.
                if case .applied(let row) = outcome {
                    remembered[operationIDs[index]] = row
                    applied.append((operationIDs[index], row))
                }
                results.append(MutationResult(operationID: mutation.operationID, outcome: outcome))
            }
            try queries.write(owner: user, rows: batch.written, operations: applied,
                              lastStamp: batch.tookStamp ? batch.lastStamp : nil, spaceStamps: batch.spaceStamps, rememberedAt: pushedAt)
            // References change only where a row written or its stored version refers to a content.
            let referring = batch.written.contains { $0.row.fields.values.contains(where: \.holdsAttachment) }
                || batch.written.contains { opening.rows[RowAddress(key: $0.row.key, owner: $0.owner)]?.row.fields.values.contains(where: \.holdsAttachment) ?? false }
            if referring { try queries.writeReferences(batch.written) }
            return results
        }
    }

    /// Whether a push of `mutations` begins its transaction and reads its
    /// remembered results and rows in one round trip (a pipeline), or, past
    /// ``PostgreSQLConnection/pipelineParameterBudget``, statement by statement.
    ///
    /// ```swift
    /// let fast = PostgreSQLStorage.opensInOneRoundTrip([mutation])   // true
    /// ```
    package static func opensInOneRoundTrip(_ mutations: [Mutation]) -> Bool {
        let keys = Set(mutations.filter { StorageRules.refusal(of: $0) == nil }.map { RowAddress(key: $0.key, owner: "") })
        return opensInOneRoundTrip(operationIDs: Set(mutations.map(\.operationID)).count, keys: Array(keys))
    }

    private static func opensInOneRoundTrip(operationIDs: Int, keys: [RowAddress]) -> Bool {
        // An operation id is 36 characters of text; each array element also carries a length word.
        let bytes = keys.reduce(operationIDs * 40) { $0 + $1.key.kind.utf8.count + $1.key.id.utf8.count + $1.owner.utf8.count + 16 }
        return bytes <= PostgreSQLConnection.pipelineParameterBudget
    }


    // MARK: Pull

    /// One page of `user`'s rows from one snapshot (see ``SyncStorage/pull(user:_:)``).
    ///
    /// ```swift
    /// let page = try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 500))
    /// ```
    public func pull(user: String, _ request: PullRequest) throws(StorageError) -> PullPage {
        // The shared rules also refuse U+0000 in kinds and cursor ids, which PostgreSQL text cannot hold.
        do throws(PullRefusal) { try StorageRules.validate(request, maximumLimit: SQLiteStorage.maximumPullLimit) } catch { throw StorageError(error) }
        applyRetention()
        let identity = self.identity
        return try transaction("begin isolation level repeatable read read only") { queries throws(StorageError) in
            if let expectation = request.expectation {
                // A device removed from a space has seen that space's stamps, which are no longer the user's.
                var latest = try queries.latestStamp(owner: user)
                if let seen = expectation.seenStamp, seen > latest { latest = max(latest, try queries.latestStampOfAnyone()) }
                if let mismatch = StorageRules.mismatch(of: expectation, identity: identity, latestStamp: latest) {
                    throw .serverMismatch(mismatch)
                }
            }
            var page = try StorageRules.page(user: user, request, PostgreSQLUserSnapshot(transaction: queries, owner: user))
            page.server = identity
            return page
        }
    }

    /// Purges tombstones past the retention, unless a purge ran within the
    /// last minute. Best effort: a failed purge leaves the tombstones for the
    /// next one and does not fail the pull.
    private func applyRetention() {
        guard let limit = retentionSchedule?.purgeLimit(at: now?() ?? SQLiteStorage.wallClockMilliseconds()) else { return }
        _ = try? purgeTombstones(olderThan: limit, kind: nil)
    }

    // MARK: Read

    /// The live row of `user` (see ``SyncStorage/read(user:kind:id:)``).
    ///
    /// ```swift
    /// let row = try storage.read(user: "u1", kind: "pin", id: "p1")
    /// ```
    public func read(user: String, kind: String, id: String) throws(StorageError) -> ServerRow? {
        // Text with U+0000 cannot be stored, so no such row exists.
        if kind.utf8.contains(0) || id.utf8.contains(0) { return nil }
        return try transaction("begin isolation level read committed read only") { queries throws(StorageError) in
            try StorageRules.read(RecordKey(kind: kind, id: id), user: user, PostgreSQLUserSnapshot(transaction: queries, owner: user))
        }
    }

    /// The live row under `key` as `user` sees it, its membership read in
    /// the same transaction (see ``SyncStorage/read(user:_:)``).
    ///
    /// ```swift
    /// let pin = try storage.read(user: "kid", RecordKey(kind: "pin", id: "p1", space: trip))
    /// ```
    public func read(user: String, _ key: RecordKey) throws(StorageError) -> ServerRow? {
        // Text with U+0000 cannot be stored, so no such row exists.
        if key.kind.utf8.contains(0) || key.id.utf8.contains(0) { return nil }
        return try transaction("begin isolation level repeatable read read only") { queries throws(StorageError) in
            try StorageRules.read(key, user: user, PostgreSQLUserSnapshot(transaction: queries, owner: user))
        }
    }

    // MARK: Spaces

    /// Applies one membership change in one transaction that first locks
    /// the space's counter, so changes of one space (and the pushes into
    /// it) follow one another (see ``SyncStorage/change(user:_:)``).
    ///
    /// ```swift
    /// let space = try storage.change(user: "dad", .create(SpaceID.random(), name: "Weekend pins"))
    /// ```
    @discardableResult
    public func change(user: String, _ change: SpaceChange) throws(StorageError) -> Space? {
        if let problem = SpaceRules.problem(in: change) { throw .badRequest(problem) }
        if case .setMember(_, let member, _) = change, member.utf8.contains(0) { throw .spaceRefused(.unknownUser(member)) }
        let isKnown = knownUsers
        let space = try transaction("begin isolation level read committed") { queries throws(StorageError) in
            if !change.space.isPersonal { _ = try queries.lockSpaces([change.space], user: user) }
            if case .create = change {
                // Two creates of one new id: the second waits here, then finds the space.
                try queries.lockSpaceCreation(change.space)
            }
            return try SpaceRules.apply(change, user: user, isKnown: isKnown, queries)
        }
        announcer.announce(.membershipChanged(change.space, users: change.changedUsers(by: user)))
        return space
    }

    /// Every shared space `user` is a member of (see ``SyncStorage/spaces(user:)``).
    ///
    /// ```swift
    /// let spaces = try storage.spaces(user: "kid")
    /// ```
    public func spaces(user: String) throws(StorageError) -> [Space] {
        try transaction("begin isolation level repeatable read read only") { queries throws(StorageError) in
            try SpaceRules.spaces(of: user, PostgreSQLUserSnapshot(transaction: queries, owner: user))
        }
    }

    // MARK: Tombstones

    /// Purges tombstones stamped before `stamp` (see ``SyncStorage/purgeTombstones(olderThan:kind:)``).
    ///
    /// ```swift
    /// try storage.purgeTombstones(olderThan: SQLiteStorage.wallClockMilliseconds() - 86_400_000, kind: "pin")
    /// ```
    @discardableResult
    public func purgeTombstones(olderThan stamp: Int64, kind: String? = nil) throws(StorageError) -> Int {
        if let kind, kind.utf8.contains(0) { return 0 }
        return try transaction("begin isolation level read committed") { queries throws(StorageError) in
            let found = try queries.tombstones(before: stamp, kind: kind)
            var byOwner: [String: [(kind: String, position: PullCursor)]] = [:]
            var bySpace: [String: [(kind: String, position: PullCursor)]] = [:]
            for tombstone in found {
                if tombstone.space.isEmpty {
                    byOwner[tombstone.owner, default: []].append((tombstone.kind, tombstone.position))
                } else {
                    bySpace[tombstone.space, default: []].append((tombstone.kind, tombstone.position))
                }
            }
            var purged = 0
            // Serialised with each owner's pushes; owners locked in one order, so two purges never deadlock.
            for owner in byOwner.keys.sorted() {
                _ = try queries.lockStamps(owner: owner)
                // Only tombstones still there as found: a push may have written the record again meanwhile.
                let deleted = try queries.deleteTombstones(owner: owner, byOwner[owner] ?? [])
                purged += deleted.count
                var latest: [String: PullCursor] = [:]
                for (kind, position) in deleted where latest[kind].map({ $0 < position }) ?? true { latest[kind] = position }
                for (kind, position) in latest { try queries.raiseHorizon(owner: owner, kind: kind, to: position) }
            }
            // Then the shared spaces, their counters locked in id order, as pushes lock them.
            for space in bySpace.keys.sorted() {
                let id = try StorageTransaction.space(space, table: "rows", key: space)
                _ = try queries.lockSpaces([id], user: "")
                let deleted = try queries.deleteTombstones(space: space, owner: "", bySpace[space] ?? [])
                purged += deleted.count
                var latest: [String: PullCursor] = [:]
                for (kind, position) in deleted where latest[kind].map({ $0 < position }) ?? true { latest[kind] = position }
                for (kind, position) in latest { try queries.raiseSpaceHorizon(space, kind: kind, to: position) }
            }
            return purged
        }
    }
}

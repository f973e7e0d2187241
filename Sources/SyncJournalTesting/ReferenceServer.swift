import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync

/// An in-memory server with the protocol's exact semantics, for tests, the
/// simulator and `sync-demo` (and for apps' own tests).
///
/// - Records live in spaces (journals/PROTOCOL.md, "Spaces"): each user's
///   personal space, where two users may each hold a record of one kind and
///   id, and shared spaces (``change(user:_:)``) whose members read and
///   write by role; a mutation the caller's role does not allow is rejected
///   permanently, with a reason, never applied and never a crash. A pull
///   with ``PullRequest/spaces`` covers every space of the user.
/// - Stamps are issued by the server, strictly increasing per row and never
///   decreasing overall; rows written between two pulls may share a stamp
///   (until ``tick(_:)``), and the `(updatedAt, id)` cursor handles the tie.
///   Once a pull has handed out a stamp, later writes get a larger one, so a
///   row can never appear behind a cursor a client already holds.
/// - Deletes are soft: tombstones are pulled like rows, until they are
///   purged (``purgeTombstones(olderThan:kind:)``, or a retention): a pull
///   whose cursor is behind a purged tombstone then fails with
///   ``TransportError/cursorExpired(kinds:)``, and the client resyncs.
/// - A malformed cursor is a permanent error, never "send everything".
/// - Pages fetch `limit + 1` rows to compute `hasMore`.
/// - Operation ids are remembered (``remembersOperationIDs``): a replayed id
///   that was applied gets its first result, so a resend after a lost reply
///   never applies an operation twice. Without it, the server behaves like a
///   table behind PostgREST (insert ignoring duplicates, update and delete
///   filtered by id, stamp and row-level security): a create of an existing
///   id answers ``MutationOutcome/duplicate``, an update or delete that
///   matches nothing answers ``MutationOutcome/noMatch``, and the client
///   reads the row back with ``read(user:kind:id:)``. The package's own
///   tests can also give it an operation retention, so that remembered ids
///   are forgotten as `sync-server` forgets them, under the same rules;
///   that is a server's policy, which no app's test sets, so it is not public.
/// - Clients may wait for changes (``waitForChanges(user:after:)``): a wait
///   returns as soon as the user has rows after its cursors, whoever wrote
///   them (another device's push, or ``write(user:kind:id:fields:)``).
/// - The database has an identity (``identity``), made when the server is
///   and carried by every page: a push or pull that expects another
///   server, or a stamp beyond the server's latest (``latestStamp``), is
///   refused with ``TransportError/serverMismatch(_:)`` before anything is
///   applied. For tests the database can be reset (``reset(identity:)``),
///   copied (``snapshot()``) and restored or swapped for another server's
///   (``restore(_:)``).
/// - For tests, a push may be refused as too large
///   (``maximumBatchSize``), and single records can be made to fail
///   (``rejectPermanently(kind:id:reason:)``, ``failTransiently(kind:id:reason:times:retryAfter:)``).
///
/// ```swift
/// let server = ReferenceServer()
/// let transport = server.transport(user: "u1")
/// await server.write(user: "u1", kind: "pin", id: "p9", fields: ["name": .string("Tapas bar")])
/// ```
public actor ReferenceServer {
    /// Rows, stamps, horizons and attachments, which the shared push, pull
    /// and attachment rules query.
    var storage: InMemoryStorage
    /// Per user, the first result of each operation id applied: looked up
    /// once per push by user, then by id alone.
    private var remembered: [String: [OperationID: MutationResult]] = [:]
    /// Per user, when (server clock) each remembered operation was applied;
    /// kept only while an ``operationRetention`` is set.
    private var rememberedAt: [String: [OperationID: Int64]] = [:]
    private var pushCount = 0
    private var appliedCount = 0
    private var readCount = 0
    private var acceptedSizes: [Int] = []
    private var refusedTooLargeCount = 0

    /// How a record is made to fail, for tests.
    private enum Failing {
        case permanent(reason: String)
        case transient(reason: String, remaining: Int, retryAfter: Duration?)
    }
    private var failing: [RecordKey: Failing] = [:]

    /// A client waiting for changes (``waitForChanges(user:after:)``).
    private struct ChangeWaiter {
        var user: String
        var cursors: [String: PullCursor?]
        var spaces: [SpaceID: SpaceCursors]?
        var continuation: CheckedContinuation<ChangeWaitResult, Never>
    }
    private var changeWaiters: [Int: ChangeWaiter] = [:]
    private var nextChangeWaiter = 0
    /// Waits cancelled before they were registered.
    private var cancelledChangeWaiters: Set<Int> = []

    /// Whether the server remembers operation ids and answers a replayed id
    /// with its first result (exactly-once effect). When `false`, nothing is
    /// remembered and the server answers as a plain table does: a create of
    /// an id that exists (a live row of any user) is
    /// ``MutationOutcome/duplicate``; an update or delete whose base does not
    /// match, or whose row is missing, deleted or another user's, is
    /// ``MutationOutcome/noMatch`` (never a conflict); deleting a deleted row
    /// is ``MutationOutcome/noMatch`` too.
    ///
    /// ```swift
    /// let postgrest = ReferenceServer(remembersOperationIDs: false)
    /// await postgrest.setRemembersOperationIDs(true)   // or switch later
    /// ```
    public private(set) var remembersOperationIDs: Bool

    /// The most mutations one push may carry; a larger push is refused whole
    /// with ``TransportError/tooLarge(reason:)`` (HTTP 413) and nothing of it
    /// is applied. `nil`: no limit.
    ///
    /// ```swift
    /// let server = ReferenceServer(maximumBatchSize: 4)
    /// await server.setMaximumBatchSize(nil)   // no limit again
    /// ```
    public private(set) var maximumBatchSize: Int?

    /// How long tombstones are kept, in server-clock milliseconds: at the
    /// start of every pull, tombstones stamped more than this before the
    /// server's clock are purged (as ``purgeTombstones(olderThan:kind:)``
    /// does). `nil`: kept until purged by hand.
    ///
    /// ```swift
    /// let server = ReferenceServer(tombstoneRetentionMilliseconds: 30 * 86_400_000)   // 30 days
    /// ```
    public private(set) var tombstoneRetentionMilliseconds: Int64?

    /// How long applied operation ids are remembered, as `sync-server`'s
    /// `--operation-retention-days` (`nil`, the default: for ever).
    /// ``pruneRememberedOperations()`` forgets the ones past it, and a
    /// mutation no longer remembered is judged by its `queuedAt` with the
    /// same rules (journals/PROTOCOL.md, "Remembered operations").
    ///
    /// ```swift
    /// await server.setOperationRetention(OperationRetention(retentionMilliseconds: 10_000))
    /// ```
    package private(set) var operationRetention: OperationRetention?

    /// The identity of the server's database, carried by every page
    /// (``PullPage/server``); `nil` for a server from before identities,
    /// which ignores what devices expect.
    ///
    /// ```swift
    /// let server = ReferenceServer(identity: ServerIdentity("server-a"))
    /// #expect(await server.identity == ServerIdentity("server-a"))
    /// ```
    public private(set) var identity: ServerIdentity?

    /// The largest attachment content the server takes, in bytes
    /// (`sync-server`'s `--max-attachment-bytes`; default 1 GiB): an upload
    /// declaring more is refused with ``AttachmentRefusal/tooLarge(reason:)``.
    ///
    /// ```swift
    /// await server.setAttachmentLimits(maximumBytes: 1_000)
    /// ```
    public internal(set) var maximumAttachmentBytes: Int64 = AttachmentLimits.standard.maximumContentBytes

    /// Per user, the bytes of attachments they may hold: the contents they
    /// uploaded whole plus their unfinished uploads' declared sizes
    /// (`--attachment-quota-bytes`; default 10 GiB). An upload past it is
    /// refused with ``AttachmentRefusal/quotaExceeded(reason:)``.
    ///
    /// ```swift
    /// await server.setAttachmentLimits(quotaBytes: 10_000)
    /// ```
    public internal(set) var attachmentQuotaBytes: Int64 = AttachmentLimits.standard.quotaBytes

    /// How long, in server-clock milliseconds, a content no live row refers
    /// to is kept after its last upload, and an untouched unfinished upload
    /// (`--attachment-grace-seconds`; default 7 days); see ``collectAttachments(now:)``.
    ///
    /// ```swift
    /// await server.setAttachmentLimits(graceMilliseconds: 60_000)
    /// ```
    public internal(set) var attachmentGraceMilliseconds: Int64 = AttachmentLimits.standard.graceMilliseconds

    /// A server whose clock starts at `startMilliseconds`, with a new random
    /// identity unless one is given (`nil`: a server without one).
    ///
    /// ```swift
    /// let server = ReferenceServer()                                   // exactly-once, no limits
    /// let plain = ReferenceServer(remembersOperationIDs: false)        // PostgREST-like
    /// let small = ReferenceServer(maximumBatchSize: 4)                 // 413 above 4 mutations
    /// let old = ReferenceServer(identity: nil)                         // from before identities
    /// ```
    public init(startMilliseconds: Int64 = 1_764_000_000_000, remembersOperationIDs: Bool = true,
                maximumBatchSize: Int? = nil, tombstoneRetentionMilliseconds: Int64? = nil,
                identity: ServerIdentity? = ServerIdentity.random()) {
        storage = InMemoryStorage(clock: startMilliseconds)
        self.identity = identity
        self.remembersOperationIDs = remembersOperationIDs
        self.maximumBatchSize = maximumBatchSize.map { max(1, $0) }
        self.tombstoneRetentionMilliseconds = tombstoneRetentionMilliseconds.map { max(0, $0) }
    }

    /// A transport that talks to this server as `user`.
    ///
    /// ```swift
    /// let engine = SyncEngine(store: store, transport: server.transport(user: "u1"), options: .init(kinds: ["pin"]))
    /// ```
    public nonisolated func transport(user: String) -> ReferenceTransport {
        ReferenceTransport(server: self, user: user)
    }

    /// Advances the server's clock; until then, writes share a stamp.
    ///
    /// ```swift
    /// await server.tick(1)   // the next write gets a larger stamp
    /// ```
    public func tick(_ milliseconds: Int64) { storage.advanceClock(by: milliseconds) }

    /// The server's clock (the smallest stamp the next write can get).
    ///
    /// ```swift
    /// let now = await server.now
    /// ```
    public var now: Int64 { storage.clock }

    /// Switches exactly-once delivery on or off (see ``remembersOperationIDs``).
    ///
    /// ```swift
    /// await server.setRemembersOperationIDs(false)
    /// ```
    public func setRemembersOperationIDs(_ value: Bool) {
        remembersOperationIDs = value
        if !value { remembered = [:] }
    }

    /// Sets ``operationRetention``; operations remembered before count as
    /// remembered now.
    ///
    /// ```swift
    /// await server.setOperationRetention(OperationRetention(days: 30))
    /// ```
    package func setOperationRetention(_ retention: OperationRetention?) {
        operationRetention = retention
        rememberedAt = [:]
        guard retention != nil else { return }
        for (user, results) in remembered { rememberedAt[user] = results.mapValues { _ in storage.clock } }
    }

    /// Forgets the operations remembered longer than ``operationRetention``
    /// ago by the server's clock, and returns how many (0 without a retention).
    ///
    /// ```swift
    /// await server.tick(31 * 86_400_000)
    /// let forgotten = await server.pruneRememberedOperations()
    /// ```
    @discardableResult
    package func pruneRememberedOperations() -> Int {
        guard let operationRetention else { return 0 }
        let cutoff = operationRetention.pruneBefore(now: storage.clock)
        var forgotten = 0
        for (user, dates) in rememberedAt {
            let past = dates.filter { $0.value < cutoff }.map(\.key)
            for id in past {
                remembered[user]?[id] = nil
                rememberedAt[user]?[id] = nil
            }
            forgotten += past.count
        }
        return forgotten
    }

    /// Sets ``maximumBatchSize`` (`nil`: no limit; values below 1 act as 1).
    ///
    /// ```swift
    /// await server.setMaximumBatchSize(4)
    /// ```
    public func setMaximumBatchSize(_ size: Int?) { maximumBatchSize = size.map { max(1, $0) } }

    /// Sets ``tombstoneRetentionMilliseconds`` (`nil`: keep tombstones until purged by hand).
    ///
    /// ```swift
    /// await server.setTombstoneRetention(milliseconds: 60_000)
    /// ```
    public func setTombstoneRetention(milliseconds: Int64?) { tombstoneRetentionMilliseconds = milliseconds.map { max(0, $0) } }

    /// Push requests received, including ones refused as too large.
    ///
    /// ```swift
    /// #expect(await server.pushes == 1)
    /// ```
    public var pushes: Int { pushCount }
    /// Mutations applied (a replayed id is not applied again).
    ///
    /// ```swift
    /// #expect(await server.appliedMutations == 1, "applied exactly once")
    /// ```
    public var appliedMutations: Int { appliedCount }
    /// The number of mutations in each push the server processed, in order
    /// (pushes refused as too large are not listed).
    ///
    /// ```swift
    /// #expect(await server.acceptedPushSizes.allSatisfy { $0 <= 4 })
    /// ```
    public var acceptedPushSizes: [Int] { acceptedSizes }
    /// Pushes refused as too large.
    ///
    /// ```swift
    /// #expect(await server.refusedTooLarge > 0, "the first batch was refused and split")
    /// ```
    public var refusedTooLarge: Int { refusedTooLargeCount }
    /// Single-row reads served (``read(user:kind:id:)``).
    ///
    /// ```swift
    /// #expect(await server.reads == 1, "the duplicate was confirmed by one read")
    /// ```
    public var reads: Int { readCount }

    /// The stamp for a new version of `key` held by `owner`, as the rules would issue it.
    private func stamp(for key: RecordKey, owner: String) -> Int64 {
        storage.nextStamp(after: storage.row(key, owner: owner)?.row.updatedAt, in: key.space)
    }

    /// The owner of the personal row `kind`/`id` another writer changes: the first user who made one.
    private func personalOwner(kind: String, id: String) -> String? {
        storage.personalOwners(kind: kind, id: id).first
    }

    // MARK: Making records fail (tests)

    /// Makes every mutation of one record fail with
    /// ``MutationOutcome/rejected(reason:permanent:)`` (permanent), as a row
    /// a validation trigger refuses would: a poison pill for tests. Other
    /// records are unaffected. Lift it with ``clearFailures(kind:id:)``.
    ///
    /// ```swift
    /// await server.rejectPermanently(kind: "pin", id: "p1", reason: "422 check constraint")
    /// ```
    public func rejectPermanently(kind: String, id: String, reason: String = "rejected permanently (test)") {
        failing[RecordKey(kind: kind, id: id)] = .permanent(reason: reason)
    }

    /// Makes the next `times` mutations of one record fail with a transient
    /// ``MutationOutcome/rejected(reason:permanent:)`` (say, a row lock
    /// timeout); later ones are handled normally.
    ///
    /// ```swift
    /// await server.failTransiently(kind: "pin", id: "p1", reason: "lock timeout", times: 2)
    /// ```
    public func failTransiently(kind: String, id: String, reason: String = "failed transiently (test)", times: Int = 1,
                                retryAfter: Duration? = nil) {
        failing[RecordKey(kind: kind, id: id)] = .transient(reason: reason, remaining: max(0, times),
                                                            retryAfter: retryAfter)
    }

    /// Lifts ``rejectPermanently(kind:id:reason:)`` or ``failTransiently(kind:id:reason:times:retryAfter:)``.
    ///
    /// ```swift
    /// await server.clearFailures(kind: "pin", id: "p1")
    /// ```
    public func clearFailures(kind: String, id: String) {
        failing[RecordKey(kind: kind, id: id)] = nil
    }

    /// The injected failure for `key`, if any (a transient one is used up).
    private func injectedFailure(kind: String, id: String) -> MutationOutcome? {
        // Outside failure tests nothing is injected: no key is built or hashed.
        guard !failing.isEmpty else { return nil }
        let key = RecordKey(kind: kind, id: id)
        switch failing[key] {
        case nil:
            return nil
        case .permanent(let reason)?:
            return .rejected(reason: reason, permanent: true)
        case .transient(let reason, let remaining, let after)?:
            guard remaining > 0 else {
                failing[key] = nil
                return nil
            }
            failing[key] = remaining == 1 ? nil : .transient(reason: reason, remaining: remaining - 1, retryAfter: after)
            return .rejected(reason: reason, permanent: false)
        }
    }

    // MARK: The protocol

    /// Applies `mutations` in order for `user` and returns one result each.
    ///
    /// ```swift
    /// let results = try await server.push(user: "u1", [mutation])
    /// ```
    ///
    /// The same operation id twice in one push applies once, as in every
    /// storage; ``ReferenceTransport`` refuses such a push as `sync-server`'s
    /// HTTP layer does.
    ///
    /// - Throws: ``TransportError/serverMismatch(_:)`` when `expectation`
    ///   names another server or a stamp beyond ``latestStamp``;
    ///   ``TransportError/tooLarge(reason:)`` when more than
    ///   ``maximumBatchSize`` mutations come at once; nothing is applied then.
    public func push(user: String, _ mutations: [Mutation], expecting expectation: ServerExpectation? = nil)
        throws(TransportError) -> [MutationResult] {
        pushCount += 1
        try refuseUnexpected(expectation)
        if let maximumBatchSize, mutations.count > maximumBatchSize {
            refusedTooLargeCount += 1
            throw .tooLarge(reason: "413: \(mutations.count) mutations, at most \(maximumBatchSize) per request")
        }
        acceptedSizes.append(mutations.count)
        defer { wakeChangeWaiters() }
        var results: [MutationResult] = []
        results.reserveCapacity(mutations.count)
        guard remembersOperationIDs else {
            for mutation in mutations {
                results.append(MutationResult(operationID: mutation.operationID, outcome: try apply(mutation, user: user)))
            }
            return results
        }
        // The user's table is taken out while the push runs, so it is changed
        // in place (not copied) and its key hashed once per push.
        var mine = remembered.removeValue(forKey: user) ?? [:]
        defer { remembered[user] = mine }
        for mutation in mutations {
            if let first = mine[mutation.operationID] {
                results.append(first)
                continue
            }
            let result = MutationResult(operationID: mutation.operationID, outcome: try apply(mutation, user: user))
            // Only an applied result changed anything; a refusal is judged
            // afresh on a resend (so a record released from a failure can pass).
            if case .applied = result.outcome {
                mine[mutation.operationID] = result
                if operationRetention != nil { rememberedAt[user, default: [:]][mutation.operationID] = storage.clock }
            }
            results.append(result)
        }
        return results
    }

    /// One mutation: refused if malformed, then any failure a test injected
    /// for its record, then the rules (`sync-server`'s, or a plain table's
    /// without ``remembersOperationIDs``).
    private func apply(_ mutation: Mutation, user: String) throws(TransportError) -> MutationOutcome {
        if let refusal = StorageRules.refusal(of: mutation) { return refusal }
        if let injected = injectedFailure(kind: mutation.kind, id: mutation.recordID) { return injected }
        let writesBefore = storage.ruleWrites
        let forgotten = operationRetention?.mayBeForgotten(mutation, at: storage.clock) ?? false
        let outcome = remembersOperationIDs
            ? try StorageRules.apply(mutation, user: user, mayBeForgotten: forgotten, storage)
            : try PlainTableRules.apply(mutation, user: user, storage)
        appliedCount += storage.ruleWrites - writesBefore
        return outcome
    }

    /// One row of `user`'s personal space as `user` sees it now: `nil` when
    /// there is none or it is a tombstone. How a client confirms a
    /// ``MutationOutcome/duplicate`` or explains a ``MutationOutcome/noMatch``.
    ///
    /// ```swift
    /// if let row = await server.read(user: "u1", kind: "pin", id: "p1") { print(row.updatedAt) }
    /// ```
    public func read(user: String, kind: String, id: String) -> ServerRow? {
        read(user: user, RecordKey(kind: kind, id: id))
    }

    /// One row of any space as `user` sees it now: `nil` when there is none,
    /// it is a tombstone, or `user` is not a member of its shared space.
    ///
    /// ```swift
    /// let pin = await server.read(user: "kid", RecordKey(kind: "pin", id: "p1", space: trip))
    /// ```
    public func read(user: String, _ key: RecordKey) -> ServerRow? {
        readCount += 1
        do throws(TransportError) { return try StorageRules.read(key, user: user, storage) } catch { return nil }
    }

    /// One page of `user`'s rows after each kind's cursor, in `(updatedAt, id)`
    /// order, kinds in name order. Cursors are in their wire form
    /// `updatedAt:id` (or `nil` for the start).
    ///
    /// ```swift
    /// let page = try await server.pull(user: "u1", cursors: ["pin": nil], limit: 100)
    /// ```
    ///
    /// - Throws: ``TransportError/permanent(reason:)`` for a malformed cursor
    ///   or a bad limit; ``TransportError/cursorExpired(kinds:)`` naming every
    ///   kind whose cursor is behind a purged tombstone (a `nil` cursor never is);
    ///   ``TransportError/serverMismatch(_:)`` when `expectation` names
    ///   another server or a stamp beyond ``latestStamp``.
    ///
    /// With `resync` (a full re-pull, ``PullRequest/isResync``) no cursor is
    /// refused as expired. On the last page, a kind whose cursor would stay
    /// behind its tombstone horizon gets the horizon as its cursor: nothing of
    /// this user lies between, and a client left behind it would be refused again.
    ///
    /// With `spaces` (``PullRequest/spaces``) the page covers every shared
    /// space `user` is a member of as well, with their descriptions and the
    /// named spaces `user` lost.
    public func pull(user: String, cursors: [String: String?], limit: Int, resync: Bool = false,
                     expecting expectation: ServerExpectation? = nil, spaces: [SpaceID: SpaceCursors]? = nil) throws(TransportError) -> PullPage {
        try refuseUnexpected(expectation)
        guard limit > 0 else { throw .permanent(reason: "limit must be positive") }
        var parsed: [String: PullCursor?] = [:]
        for (kind, text) in cursors {
            if let text {
                guard let cursor = PullCursor(wire: text) else { throw .permanent(reason: "malformed cursor \"\(text)\" for \(kind)") }
                parsed[kind] = .some(cursor)
            } else {
                parsed[kind] = .some(nil)
            }
        }
        if let retention = tombstoneRetentionMilliseconds {
            let (limitStamp, overflow) = storage.clock.subtractingReportingOverflow(retention)
            if !overflow { purgeTombstones(olderThan: limitStamp) }
        }
        let request = PullRequest(cursors: parsed, limit: limit, isResync: resync, spaces: spaces)
        // No largest limit: that is the wire's (HTTP clients clamp to it), and this transport has no wire.
        do throws(PullRefusal) { try StorageRules.validate(request, maximumLimit: .max) } catch { throw InMemoryStorage.failure(error) }
        var page = try StorageRules.page(user: user, request, storage)
        storage.seal(page)
        page.server = identity
        return page
    }

    // MARK: Shared spaces

    /// Whether a membership change may add a user (`nil`, the default: any
    /// user), as `sync-server`'s user directory knows them.
    private var knownUsers: (@Sendable (String) -> Bool)?

    /// Sets which users ``change(user:_:)`` may add to a space (`nil`: any);
    /// adding another is refused with ``SpaceRefusal/unknownUser(_:)``.
    ///
    /// ```swift
    /// await server.setKnownUsers { ["dad", "kid"].contains($0) }
    /// ```
    package func setKnownUsers(_ isKnown: (@Sendable (String) -> Bool)?) { knownUsers = isKnown }

    /// Applies one membership change of `user` (journals/PROTOCOL.md,
    /// "Membership") and returns the space as `user` sees it after it
    /// (`nil` when `user` is no longer a member: left, deleted, removed
    /// themself). Every open wait of a member, those removed included,
    /// is woken.
    ///
    /// ```swift
    /// let trip = SpaceID.random()
    /// let space = try await server.change(user: "dad", .create(trip, name: "Weekend pins"))
    /// try await server.change(user: "dad", .setMember(trip, user: "kid", role: .editor))
    /// ```
    ///
    /// - Throws: ``TransportError/spaceRefused(_:)`` with the refusal;
    ///   ``TransportError/permanent(reason:)`` for a name the protocol does not allow.
    @discardableResult
    public func change(user: String, _ change: SpaceChange) throws(TransportError) -> Space? {
        if let problem = SpaceRules.problem(in: change) { throw .permanent(reason: "400: \(problem)") }
        let known = knownUsers
        defer { wakeChangeWaiters() }
        return try SpaceRules.apply(change, user: user, isKnown: { known?($0) ?? true }, storage)
    }

    /// Every shared space `user` is a member of, ordered by id.
    ///
    /// ```swift
    /// let spaces = await server.spaces(user: "kid")
    /// ```
    public func spaces(user: String) -> [Space] {
        (try? SpaceRules.spaces(of: user, storage)) ?? []
    }

    // MARK: The server's identity and history

    /// The largest stamp the server ever issued or handed out (a row's, a
    /// cursor's or a horizon's; 0 before any): a device that pulled a
    /// larger one finds the server behind it. Purging tombstones never
    /// lowers it; only a ``restore(_:)`` does.
    ///
    /// ```swift
    /// let seen = await server.latestStamp
    /// ```
    public var latestStamp: Int64 { storage.latestStamp }

    /// Refuses a request that expects another server, or one further along.
    private func refuseUnexpected(_ expectation: ServerExpectation?) throws(TransportError) {
        if let mismatch = StorageRules.mismatch(of: expectation, identity: identity, latestStamp: storage.latestStamp) {
            throw .serverMismatch(mismatch)
        }
    }

    /// Replaces the database with a new, empty one with a new identity (by
    /// default a random one; `nil`: none), as an operator who wiped the
    /// server or pointed it at a fresh database would. The clock goes on;
    /// remembered operations are forgotten; open waits are answered
    /// ``ChangeWaitResult/changed`` so their devices pull and learn of it.
    ///
    /// ```swift
    /// await server.reset()                                      // empty, new identity
    /// await server.reset(identity: ServerIdentity("fresh-db"))  // a chosen one
    /// ```
    public func reset(identity: ServerIdentity? = ServerIdentity.random()) {
        replace(with: ReferenceServerSnapshot(identity: identity, tables: InMemoryTables(), remembered: [:], rememberedAt: [:]))
    }

    /// A copy of the database as it is now (rows, stamp counter, tombstone
    /// horizons, remembered operations, identity), to ``restore(_:)`` later
    /// or into another server.
    ///
    /// ```swift
    /// let backup = await server.snapshot()
    /// ```
    public func snapshot() -> ReferenceServerSnapshot {
        ReferenceServerSnapshot(identity: identity, tables: storage.tables, remembered: remembered, rememberedAt: rememberedAt)
    }

    /// Replaces the database with `snapshot`, identity included: this
    /// server's own earlier snapshot puts it back in time (a backup
    /// restored; ``latestStamp`` goes back with it), another server's swaps
    /// that server's database in. The clock goes on (time never goes back);
    /// open waits are answered ``ChangeWaitResult/changed``.
    ///
    /// ```swift
    /// let backup = await server.snapshot()
    /// await server.restore(backup)                        // back in time
    /// await server.restore(await other.snapshot())        // another server's data and identity
    /// ```
    public func restore(_ snapshot: ReferenceServerSnapshot) {
        replace(with: snapshot)
    }

    /// Gives the database a new identity and keeps its data, as an operator
    /// does after restoring a backup (`sync-server --new-identity`): every
    /// device then meets a different server and reconciles.
    ///
    /// ```swift
    /// await server.setIdentity(.random())
    /// ```
    public func setIdentity(_ identity: ServerIdentity?) { self.identity = identity }

    private func replace(with snapshot: ReferenceServerSnapshot) {
        storage = InMemoryStorage(snapshot.tables, clock: storage.clock)
        identity = snapshot.identity
        remembered = snapshot.remembered
        rememberedAt = operationRetention == nil ? [:] : snapshot.rememberedAt
        let waiters = changeWaiters
        changeWaiters = [:]
        for waiter in waiters.values { waiter.continuation.resume(returning: .changed) }
    }

    // MARK: The tombstone horizon

    /// Forgets tombstones stamped before `stamp` (of `kind`, or of every kind
    /// when `nil`), as a server that keeps deletions only for a while does.
    /// Each kind remembers the position of the last tombstone it purged: a
    /// later pull with a cursor before it fails with
    /// ``TransportError/cursorExpired(kinds:)``, because that client missed a
    /// deletion it can no longer be told about.
    ///
    /// ```swift
    /// await server.delete(kind: "pin", id: "p1")
    /// await server.tick(1)
    /// await server.purgeTombstones(olderThan: await server.now)   // p1's tombstone is gone
    /// ```
    ///
    /// - Returns: the number of tombstones purged.
    @discardableResult
    public func purgeTombstones(olderThan stamp: Int64, kind: String? = nil) -> Int {
        storage.purgeTombstones(olderThan: stamp, kind: kind)
    }

    /// The position of the last tombstone of `kind` purged (a cursor before
    /// it is expired), or `nil` if none was.
    ///
    /// ```swift
    /// #expect(await server.tombstoneHorizon(kind: "pin")!.updatedAt > deviceCursor.updatedAt)
    /// ```
    public func tombstoneHorizon(kind: String) -> PullCursor? { storage.horizon(kind: kind, in: .personal) }

    // MARK: Other writers and inspection

    /// Writes a row as another writer would (a chat adding a pin, another
    /// device): creates it or replaces its fields, with a fresh stamp.
    ///
    /// ```swift
    /// await server.write(user: "u1", kind: "pin", id: "p9", fields: ["name": .string("Tapas bar")])
    /// ```
    ///
    /// In a shared space (`space`) the row is the space's, whoever `user` is.
    /// Without ``remembersOperationIDs`` (a plain table, one record per kind
    /// and id) a personal row of another user under the same id passes to `user`.
    ///
    /// ```swift
    /// await server.write(user: "dad", kind: "pin", id: "p1", fields: ["name": .string("Tapas")], space: trip)
    /// ```
    @discardableResult
    public func write(user: String, kind: String, id: String, fields: [String: FieldValue], space: SpaceID = .personal) -> ServerRow {
        let key = RecordKey(kind: kind, id: id, space: space)
        let owner = StorageRules.owner(in: space, user: user)
        // A writer that states no model version leaves the record's highest one as it was.
        let modelVersion = storage.row(key, owner: owner)?.row.modelVersion
        let row = ServerRow(kind: kind, id: id, fields: fields, updatedAt: stamp(for: key, owner: owner), modelVersion: modelVersion, space: space)
        if !remembersOperationIDs && space.isPersonal {
            // A plain table keys records by kind and id alone: the record passes to `user`.
            storage.removePersonalRows(kind: kind, id: id, except: user)
        }
        storage.store(row, owner: owner)
        wakeChangeWaiters()
        return row
    }

    /// Changes some fields of a live row as another writer would; `nil` if there is none.
    ///
    /// ```swift
    /// await server.update(kind: "pin", id: "p1", changes: ["name": .string("Tablet")])
    /// ```
    @discardableResult
    public func update(kind: String, id: String, changes: [String: FieldValue]) -> ServerRow? {
        let key = RecordKey(kind: kind, id: id)
        guard let owner = personalOwner(kind: kind, id: id), var stored = storage.row(key, owner: owner), !stored.row.isTombstone else { return nil }
        stored.row.fields.merge(changes) { _, new in new }
        stored.row.updatedAt = stamp(for: key, owner: owner)
        storage.store(stored.row, owner: stored.owner, createdBy: stored.createdBy)
        wakeChangeWaiters()
        return stored.row
    }

    /// Deletes a row as another writer would (soft: a tombstone); `nil` if there is none.
    ///
    /// ```swift
    /// await server.delete(kind: "pin", id: "p1")
    /// ```
    @discardableResult
    public func delete(kind: String, id: String) -> ServerRow? {
        let key = RecordKey(kind: kind, id: id)
        guard let owner = personalOwner(kind: kind, id: id), var stored = storage.row(key, owner: owner), !stored.row.isTombstone else { return nil }
        let now = stamp(for: key, owner: owner)
        stored.row = ServerRow(kind: kind, id: id, updatedAt: now, deletedAt: now, modelVersion: stored.row.modelVersion)
        storage.store(stored.row, owner: stored.owner, createdBy: stored.createdBy)
        wakeChangeWaiters()
        return stored.row
    }

    /// The live personal row (not a tombstone), if any, of the first user who made one.
    ///
    /// ```swift
    /// #expect(await server.row(kind: "pin", id: "p1")?.fields["name"] == .string("Cafe"))
    /// ```
    public func row(kind: String, id: String) -> ServerRow? {
        guard let owner = personalOwner(kind: kind, id: id) else { return nil }
        return storage.row(RecordKey(kind: kind, id: id), owner: owner).flatMap { $0.row.isTombstone ? nil : $0.row }
    }

    /// `user`'s live rows of `kind`, by id.
    ///
    /// ```swift
    /// #expect(await server.rows(user: "u1", kind: "pin").map(\.id) == ["p1", "p2"])
    /// ```
    public func rows(user: String, kind: String) -> [ServerRow] {
        storage.storedRows.filter { $0.owner == user && $0.row.space.isPersonal && $0.row.kind == kind && !$0.row.isTombstone }
            .map(\.row).sorted { $0.id < $1.id }
    }

    /// Whether the server remembers the result of operation `id` of `user`
    /// (it does once it applied it, while ``remembersOperationIDs`` is on).
    ///
    /// ```swift
    /// #expect(await server.remembers(operationID, user: "u1"))
    /// ```
    public func remembers(_ id: OperationID, user: String) -> Bool { remembered[user]?[id] != nil }

    // MARK: Waiting for changes

    /// Waits until `user` has rows after `cursors` (any of the kinds named),
    /// and answers ``ChangeWaitResult/changed``: at once if there already are,
    /// otherwise when a push or another writer stores one. The wait has no
    /// clock of its own: it ends with a change, with ``endChangeWaits()``
    /// (``ChangeWaitResult/timedOut``, as a server's timeout would), or when
    /// the waiting task is cancelled (``ChangeWaitResult/timedOut`` too).
    ///
    /// ```swift
    /// let result = await server.waitForChanges(user: "u1", after: ["pin": nil])   // .changed once u1 has a pin
    /// ```
    ///
    /// With `spaces` the wait follows `user`'s shared spaces as a pull with
    /// them does: a row in any of them, a newer description, a space joined
    /// or lost ends it.
    public func waitForChanges(user: String, after cursors: [String: PullCursor?],
                               spaces: [SpaceID: SpaceCursors]? = nil) async -> ChangeWaitResult {
        if hasChanges(user: user, after: cursors, spaces: spaces) { return .changed }
        let id = nextChangeWaiter
        nextChangeWaiter += 1
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ChangeWaitResult, Never>) in
                if cancelledChangeWaiters.remove(id) != nil {
                    continuation.resume(returning: .timedOut)
                    return
                }
                changeWaiters[id] = ChangeWaiter(user: user, cursors: cursors, spaces: spaces, continuation: continuation)
            }
        } onCancel: {
            Task { await self.cancelChangeWait(id) }
        }
    }

    /// Waits for changes open now.
    ///
    /// ```swift
    /// #expect(await server.openChangeWaits == 1, "one wait per device")
    /// ```
    public var openChangeWaits: Int { changeWaiters.count }

    /// Answers every open wait with ``ChangeWaitResult/timedOut``, as a
    /// server does when a wait has lasted its timeout.
    ///
    /// ```swift
    /// await server.endChangeWaits()   // clients open new waits
    /// ```
    public func endChangeWaits() {
        let waiters = changeWaiters
        changeWaiters = [:]
        for waiter in waiters.values { waiter.continuation.resume(returning: .timedOut) }
    }

    private func cancelChangeWait(_ id: Int) {
        if let waiter = changeWaiters.removeValue(forKey: id) {
            waiter.continuation.resume(returning: .timedOut)
        } else if id < nextChangeWaiter {
            // Cancelled before it was registered (or after it was answered: harmless).
            cancelledChangeWaiters.insert(id)
        }
    }

    /// Whether a pull with these cursors would bring `user` anything: a row
    /// of one of the kinds after its cursor, in any space followed, a
    /// space's description or a lost space (or be refused: the device must
    /// pull to learn why).
    private func hasChanges(user: String, after cursors: [String: PullCursor?], spaces: [SpaceID: SpaceCursors]?) -> Bool {
        let request = PullRequest(cursors: cursors, limit: 1, spaces: spaces)
        do throws(TransportError) {
            let page = try StorageRules.page(user: user, request, storage)
            return !page.rows.isEmpty || !page.spaces.isEmpty || !page.lostSpaces.isEmpty
        } catch {
            return true
        }
    }

    /// Answers the waits that now have rows after their cursors.
    private func wakeChangeWaiters() {
        guard !changeWaiters.isEmpty else { return }
        for (id, waiter) in changeWaiters where hasChanges(user: waiter.user, after: waiter.cursors, spaces: waiter.spaces) {
            changeWaiters[id] = nil
            waiter.continuation.resume(returning: .changed)
        }
    }
}

/// The transport to a ``ReferenceServer`` in the same process.
///
/// ```swift
/// let transport: any SyncTransport = server.transport(user: "u1")
/// ```
public struct ReferenceTransport: SyncTransport {
    /// The server.
    public let server: ReferenceServer
    /// The user the requests come from.
    public let user: String

    /// Pushes to the server as ``user`` with no expectation (see ``ReferenceServer/push(user:_:expecting:)``).
    ///
    /// - Throws: ``TransportError/permanent(reason:)`` when one operation id
    ///   comes twice in `mutations`, as `sync-server` answers 400; nothing
    ///   is applied then.
    public func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
        try await push(mutations, expecting: nil)
    }

    /// Pushes to the server as ``user``, to be applied only if it is the
    /// server `expectation` names and not behind it (see
    /// ``ReferenceServer/push(user:_:expecting:)``).
    public func push(_ mutations: [Mutation], expecting expectation: ServerExpectation?) async throws(TransportError) -> [MutationResult] {
        var positions: [OperationID: Int] = [:]
        positions.reserveCapacity(mutations.count)
        for (index, mutation) in mutations.enumerated() {
            if let first = positions.updateValue(index, forKey: mutation.operationID) {
                throw .permanent(reason: "400: operation id \(mutation.operationID) appears twice in one push (at \(first) and \(index))")
            }
        }
        return try await server.push(user: user, mutations, expecting: expectation)
    }

    /// Pulls from the server as ``user`` (see ``ReferenceServer/pull(user:cursors:limit:resync:expecting:)``);
    /// the page carries the server's identity.
    public func pull(_ request: PullRequest) async throws(TransportError) -> PullPage {
        let wire = request.cursors.mapValues { $0?.wire }
        return try await server.pull(user: user, cursors: wire, limit: request.limit, resync: request.isResync,
                                     expecting: request.expectation, spaces: request.spaces)
    }

    /// Reads one row as ``user`` sees it (see ``ReferenceServer/read(user:kind:id:)``).
    public func read(kind: String, id: String) async throws(TransportError) -> ServerRow? {
        await server.read(user: user, kind: kind, id: id)
    }

    /// Waits for ``user``'s changes (see ``ReferenceServer/waitForChanges(user:after:spaces:)``);
    /// the server has no clock, so `timeout` is the caller's to keep.
    public func waitForChanges(after cursors: [String: PullCursor?], timeout: Duration) async throws(TransportError) -> ChangeWaitResult {
        await server.waitForChanges(user: user, after: cursors)
    }

    /// Waits for ``user``'s changes in the personal space and the shared
    /// spaces (see ``ReferenceServer/waitForChanges(user:after:spaces:)``).
    public func waitForChanges(after cursors: [String: PullCursor?], spaces: [SpaceID: SpaceCursors]?,
                               timeout: Duration) async throws(TransportError) -> ChangeWaitResult {
        await server.waitForChanges(user: user, after: cursors, spaces: spaces)
    }

    /// Reads one row of any space as ``user`` sees it (see ``ReferenceServer/read(user:_:)``).
    public func read(_ key: RecordKey) async throws(TransportError) -> ServerRow? {
        await server.read(user: user, key)
    }

    /// Applies a membership change as ``user`` (see ``ReferenceServer/change(user:_:)``).
    public func change(_ change: SpaceChange) async throws(TransportError) -> Space? {
        try await server.change(user: user, change)
    }

    /// The shared spaces ``user`` is a member of (see ``ReferenceServer/spaces(user:)``).
    public func spaces() async throws(TransportError) -> [Space] {
        await server.spaces(user: user)
    }
}

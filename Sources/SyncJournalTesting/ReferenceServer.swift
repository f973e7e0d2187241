import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync

/// An in-memory server with the protocol's exact semantics, for tests, the
/// simulator and `sync-demo` (and for apps' own tests).
///
/// - Users own records: a mutation of another user's record is rejected
///   (permanently, with a reason), never applied and never a crash.
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
///   reads the row back with ``read(user:kind:id:)``.
/// - For tests, a push may be refused as too large
///   (``maximumBatchSize``), and single records can be made to fail
///   (``rejectPermanently(kind:id:reason:)``, ``failTransiently(kind:id:reason:times:retryAfterMilliseconds:)``).
///
/// ```swift
/// let server = ReferenceServer()
/// let transport = server.transport(user: "u1")
/// await server.write(user: "u1", kind: "pin", id: "p9", fields: ["name": .string("Tapas bar")])
/// ```
public actor ReferenceServer {
    private struct Stored {
        var row: ServerRow
        var owner: String
    }

    private var table: [RecordKey: Stored] = [:]
    private struct Remembered: Hashable {
        var user: String
        var operationID: OperationID
    }
    private var remembered: [Remembered: MutationResult] = [:]
    private var clock: Int64
    private var lastIssued: Int64 = .min
    /// The largest stamp a pull has handed out; later writes go above it.
    private var sealed: Int64 = .min
    private var pushCount = 0
    private var appliedCount = 0
    private var readCount = 0
    private var acceptedSizes: [Int] = []
    private var refusedTooLargeCount = 0
    /// Per kind, the position of the last tombstone purged: a cursor before it missed a deletion.
    private var horizons: [String: PullCursor] = [:]

    /// How a record is made to fail, for tests.
    private enum Failing {
        case permanent(reason: String)
        case transient(reason: String, remaining: Int, retryAfterMilliseconds: Int64?)
    }
    private var failing: [RecordKey: Failing] = [:]

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

    /// A server whose clock starts at `startMilliseconds`.
    ///
    /// ```swift
    /// let server = ReferenceServer()                                   // exactly-once, no limits
    /// let plain = ReferenceServer(remembersOperationIDs: false)        // PostgREST-like
    /// let small = ReferenceServer(maximumBatchSize: 4)                 // 413 above 4 mutations
    /// ```
    public init(startMilliseconds: Int64 = 1_764_000_000_000, remembersOperationIDs: Bool = true,
                maximumBatchSize: Int? = nil, tombstoneRetentionMilliseconds: Int64? = nil) {
        clock = startMilliseconds
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
    public func tick(_ milliseconds: Int64) { clock += max(0, milliseconds) }

    /// The server's clock (the smallest stamp the next write can get).
    ///
    /// ```swift
    /// let now = await server.now
    /// ```
    public var now: Int64 { clock }

    /// Switches exactly-once delivery on or off (see ``remembersOperationIDs``).
    ///
    /// ```swift
    /// await server.setRemembersOperationIDs(false)
    /// ```
    public func setRemembersOperationIDs(_ value: Bool) {
        remembersOperationIDs = value
        if !value { remembered = [:] }
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

    private func stamp(for key: RecordKey) -> Int64 {
        var value = max(clock, lastIssued)
        if sealed != .min { value = max(value, sealed + 1) }
        if let existing = table[key] { value = max(value, existing.row.updatedAt + 1) }
        lastIssued = value
        return value
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
                                retryAfterMilliseconds: Int64? = nil) {
        failing[RecordKey(kind: kind, id: id)] = .transient(reason: reason, remaining: max(0, times),
                                                            retryAfterMilliseconds: retryAfterMilliseconds)
    }

    /// Lifts ``rejectPermanently(kind:id:reason:)`` or ``failTransiently(kind:id:reason:times:retryAfterMilliseconds:)``.
    ///
    /// ```swift
    /// await server.clearFailures(kind: "pin", id: "p1")
    /// ```
    public func clearFailures(kind: String, id: String) {
        failing[RecordKey(kind: kind, id: id)] = nil
    }

    /// The injected failure for `key`, if any (a transient one is used up).
    private func injectedFailure(for key: RecordKey) -> MutationOutcome? {
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
            failing[key] = remaining == 1 ? nil : .transient(reason: reason, remaining: remaining - 1, retryAfterMilliseconds: after)
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
    /// - Throws: ``TransportError/tooLarge(reason:)`` when more than
    ///   ``maximumBatchSize`` mutations come at once; nothing is applied then.
    public func push(user: String, _ mutations: [Mutation]) throws(TransportError) -> [MutationResult] {
        pushCount += 1
        if let maximumBatchSize, mutations.count > maximumBatchSize {
            refusedTooLargeCount += 1
            throw .tooLarge(reason: "413: \(mutations.count) mutations, at most \(maximumBatchSize) per request")
        }
        acceptedSizes.append(mutations.count)
        return mutations.map { mutation in
            guard remembersOperationIDs else {
                return MutationResult(operationID: mutation.operationID, outcome: apply(mutation, user: user))
            }
            let key = Remembered(user: user, operationID: mutation.operationID)
            if let first = remembered[key] { return first }
            let result = MutationResult(operationID: mutation.operationID, outcome: apply(mutation, user: user))
            // Only an applied result changed anything; a refusal is judged
            // afresh on a resend (so a record released from a failure can pass).
            if case .applied = result.outcome { remembered[key] = result }
            return result
        }
    }

    private func apply(_ mutation: Mutation, user: String) -> MutationOutcome {
        if mutation.kind.isEmpty { return .rejected(reason: "empty kind", permanent: true) }
        if mutation.recordID.isEmpty || mutation.recordID.utf8.count > ProtocolLimits.maximumRecordIDBytes {
            return .rejected(reason: "record id must be 1 to \(ProtocolLimits.maximumRecordIDBytes) bytes of UTF-8", permanent: true)
        }
        if mutation.fields.keys.contains(where: \.isEmpty) { return .rejected(reason: "empty field name", permanent: true) }
        let key = RecordKey(kind: mutation.kind, id: mutation.recordID)
        if let injected = injectedFailure(for: key) { return injected }
        guard remembersOperationIDs else { return applyWithoutExactlyOnce(mutation, key: key, user: user) }
        let existing = table[key]
        if let existing, existing.owner != user {
            return .rejected(reason: "forbidden: \(key) belongs to another user", permanent: true)
        }
        let live = existing.flatMap { $0.row.isTombstone ? nil : $0.row }
        switch mutation.op {
        case .create:
            if let live { return .conflict(server: live) }
            return insert(mutation, key: key, user: user)
        case .update:
            guard let row = live else { return .conflict(server: nil) }
            guard mutation.baseUpdatedAt == row.updatedAt else { return .conflict(server: row) }
            return change(row, with: mutation, key: key, user: user)
        case .delete:
            guard let row = live else {
                // Deleting twice is harmless: the tombstone (or a fresh one) is the answer.
                if let existing { return .applied(existing.row) }
                let now = stamp(for: key)
                let tombstone = ServerRow(kind: key.kind, id: key.id, updatedAt: now, deletedAt: now)
                table[key] = Stored(row: tombstone, owner: user)
                appliedCount += 1
                return .applied(tombstone)
            }
            guard mutation.baseUpdatedAt == row.updatedAt else { return .conflict(server: row) }
            return remove(row, key: key, user: user)
        }
    }

    /// A plain table's answers: an insert that ignores duplicates, an update
    /// or delete filtered by id, stamp and owner that reports only what it matched.
    private func applyWithoutExactlyOnce(_ mutation: Mutation, key: RecordKey, user: String) -> MutationOutcome {
        let existing = table[key]
        switch mutation.op {
        case .create:
            // The primary key exists: a live row of anyone, or another user's tombstone.
            if let existing, !existing.row.isTombstone || existing.owner != user { return .duplicate }
            return insert(mutation, key: key, user: user)
        case .update, .delete:
            guard let existing, existing.owner == user, !existing.row.isTombstone,
                  mutation.baseUpdatedAt == existing.row.updatedAt else { return .noMatch }
            return mutation.op == .update ? change(existing.row, with: mutation, key: key, user: user)
                                          : remove(existing.row, key: key, user: user)
        }
    }

    private func insert(_ mutation: Mutation, key: RecordKey, user: String) -> MutationOutcome {
        let row = ServerRow(kind: key.kind, id: key.id, fields: mutation.fields, updatedAt: stamp(for: key))
        table[key] = Stored(row: row, owner: user)
        appliedCount += 1
        return .applied(row)
    }

    private func change(_ row: ServerRow, with mutation: Mutation, key: RecordKey, user: String) -> MutationOutcome {
        var row = row
        row.fields.merge(mutation.fields) { _, new in new }
        row.updatedAt = stamp(for: key)
        table[key] = Stored(row: row, owner: user)
        appliedCount += 1
        return .applied(row)
    }

    private func remove(_ row: ServerRow, key: RecordKey, user: String) -> MutationOutcome {
        let now = stamp(for: key)
        let tombstone = ServerRow(kind: key.kind, id: key.id, updatedAt: now, deletedAt: now)
        table[key] = Stored(row: tombstone, owner: user)
        appliedCount += 1
        return .applied(tombstone)
    }

    /// One row as `user` sees it now: `nil` when there is none, it is a
    /// tombstone, or it belongs to another user (row-level security hides it).
    /// How a client confirms a ``MutationOutcome/duplicate`` or explains a
    /// ``MutationOutcome/noMatch``.
    ///
    /// ```swift
    /// if let row = await server.read(user: "u1", kind: "pin", id: "p1") { print(row.updatedAt) }
    /// ```
    public func read(user: String, kind: String, id: String) -> ServerRow? {
        readCount += 1
        guard let stored = table[RecordKey(kind: kind, id: id)], stored.owner == user, !stored.row.isTombstone else { return nil }
        return stored.row
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
    ///   kind whose cursor is behind a purged tombstone (a `nil` cursor never is).
    ///
    /// With `resync` (a full re-pull, ``PullRequest/isResync``) no cursor is
    /// refused as expired. On the last page, a kind whose cursor would stay
    /// behind its tombstone horizon gets the horizon as its cursor: nothing of
    /// this user lies between, and a client left behind it would be refused again.
    public func pull(user: String, cursors: [String: String?], limit: Int, resync: Bool = false) throws(TransportError) -> PullPage {
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
            let (limitStamp, overflow) = clock.subtractingReportingOverflow(retention)
            if !overflow { purgeTombstones(olderThan: limitStamp) }
        }
        let expired = parsed.compactMap { kind, cursor -> String? in
            guard let cursor = cursor ?? nil, let horizon = horizons[kind], cursor < horizon else { return nil }
            return kind
        }
        if !expired.isEmpty && !resync { throw .cursorExpired(kinds: expired.sorted()) }
        var page: [ServerRow] = []
        for kind in parsed.keys.sorted() {
            let after = parsed[kind] ?? nil
            let candidates = table.values
                .filter { $0.owner == user && $0.row.kind == kind }
                .map(\.row)
                .filter { row in after.map { $0 < PullCursor(updatedAt: row.updatedAt, id: row.id) } ?? true }
                .sorted { PullCursor(updatedAt: $0.updatedAt, id: $0.id) < PullCursor(updatedAt: $1.updatedAt, id: $1.id) }
            page += candidates.prefix(limit + 1 - page.count)
            if page.count > limit { break }
        }
        let hasMore = page.count > limit
        if hasMore { page.removeLast() }
        var next: [String: PullCursor] = [:]
        for row in page {
            next[row.kind] = PullCursor(updatedAt: row.updatedAt, id: row.id)
            sealed = max(sealed, row.updatedAt)
        }
        if !hasMore {
            for kind in parsed.keys.sorted() {
                guard let horizon = horizons[kind] else { continue }
                let reached = next[kind] ?? (parsed[kind] ?? nil)
                if reached.map({ $0 < horizon }) ?? true {
                    next[kind] = horizon
                    sealed = max(sealed, horizon.updatedAt)
                }
            }
        }
        return PullPage(rows: page, nextCursors: next, hasMore: hasMore)
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
        let purged = table.filter { key, stored in
            stored.row.isTombstone && stored.row.updatedAt < stamp && (kind == nil || key.kind == kind)
        }
        for (key, stored) in purged {
            table[key] = nil
            let position = PullCursor(updatedAt: stored.row.updatedAt, id: stored.row.id)
            // Later writes must sort after the horizon, or a client moved to it would skip them.
            sealed = max(sealed, stored.row.updatedAt)
            if horizons[key.kind].map({ $0 < position }) ?? true { horizons[key.kind] = position }
        }
        return purged.count
    }

    /// The position of the last tombstone of `kind` purged (a cursor before
    /// it is expired), or `nil` if none was.
    ///
    /// ```swift
    /// #expect(await server.tombstoneHorizon(kind: "pin")!.updatedAt > deviceCursor.updatedAt)
    /// ```
    public func tombstoneHorizon(kind: String) -> PullCursor? { horizons[kind] }

    // MARK: Other writers and inspection

    /// Writes a row as another writer would (a chat adding a pin, another
    /// device): creates it or replaces its fields, with a fresh stamp.
    ///
    /// ```swift
    /// await server.write(user: "u1", kind: "pin", id: "p9", fields: ["name": .string("Tapas bar")])
    /// ```
    @discardableResult
    public func write(user: String, kind: String, id: String, fields: [String: FieldValue]) -> ServerRow {
        let key = RecordKey(kind: kind, id: id)
        let row = ServerRow(kind: kind, id: id, fields: fields, updatedAt: stamp(for: key))
        table[key] = Stored(row: row, owner: user)
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
        guard var stored = table[key], !stored.row.isTombstone else { return nil }
        stored.row.fields.merge(changes) { _, new in new }
        stored.row.updatedAt = stamp(for: key)
        table[key] = stored
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
        guard var stored = table[key], !stored.row.isTombstone else { return nil }
        let now = stamp(for: key)
        stored.row = ServerRow(kind: kind, id: id, updatedAt: now, deletedAt: now)
        table[key] = stored
        return stored.row
    }

    /// The live row (not a tombstone), if any, whoever owns it.
    ///
    /// ```swift
    /// #expect(await server.row(kind: "pin", id: "p1")?.fields["name"] == .string("Cafe"))
    /// ```
    public func row(kind: String, id: String) -> ServerRow? {
        table[RecordKey(kind: kind, id: id)].flatMap { $0.row.isTombstone ? nil : $0.row }
    }

    /// `user`'s live rows of `kind`, by id.
    ///
    /// ```swift
    /// #expect(await server.rows(user: "u1", kind: "pin").map(\.id) == ["p1", "p2"])
    /// ```
    public func rows(user: String, kind: String) -> [ServerRow] {
        table.values.filter { $0.owner == user && $0.row.kind == kind && !$0.row.isTombstone }.map(\.row).sorted { $0.id < $1.id }
    }

    /// Whether the server remembers the result of operation `id` of `user`
    /// (it does once it applied it, while ``remembersOperationIDs`` is on).
    ///
    /// ```swift
    /// #expect(await server.remembers(operationID, user: "u1"))
    /// ```
    public func remembers(_ id: OperationID, user: String) -> Bool { remembered[Remembered(user: user, operationID: id)] != nil }
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

    /// Pushes to the server as ``user`` (see ``ReferenceServer/push(user:_:)``).
    public func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
        try await server.push(user: user, mutations)
    }

    /// Pulls from the server as ``user`` (see ``ReferenceServer/pull(user:cursors:limit:)``).
    public func pull(_ request: PullRequest) async throws(TransportError) -> PullPage {
        let wire = request.cursors.mapValues { $0?.wire }
        return try await server.pull(user: user, cursors: wire, limit: request.limit, resync: request.isResync)
    }

    /// Reads one row as ``user`` sees it (see ``ReferenceServer/read(user:kind:id:)``).
    public func read(kind: String, id: String) async throws(TransportError) -> ServerRow? {
        await server.read(user: user, kind: kind, id: id)
    }
}

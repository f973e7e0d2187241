import SyncJournalProtocol

/// Where `sync-server` keeps rows, remembered operation ids, the stamp
/// counter and tombstone horizons, with ``ReferenceServer``'s semantics
/// (journals/PROTOCOL.md, "Push", "Pull", "Read").
///
/// The calls block (the HTTP server runs each connection on its own thread)
/// and may be made from many threads at once. ``SQLiteStorage`` and
/// ``PostgreSQLStorage`` implement it with the same tables (see
/// journals/PROTOCOL.md, "Appendix: server storage").
///
/// What every implementation must keep:
/// - ``push(user:_:)`` is one transaction: all of it is durable before it
///   returns, or none of it is applied.
/// - Stamps come from the storage, `max(now, last + 1)` inside the
///   transaction, so every write's stamp is larger than every stamp of the
///   same space before it and a pull that saw a stamp never misses a later
///   write of that space (cursors are per space and kind; ``SQLiteStorage``
///   orders every space's stamps on one counter, ``PostgreSQLStorage`` keeps
///   one counter per user's personal space and one per shared space).
/// - Shared spaces (journals/PROTOCOL.md, "Spaces"): every record request
///   is authorized by the caller's membership, read in the same
///   transaction; the membership rules are `SpaceRules`', the push and pull
///   rules `StorageRules`', the same in every storage.
/// - ``pull(user:_:)`` reads one consistent snapshot.
/// - Errors: a refused request is ``StorageError/badCursor(kind:reason:)``,
///   ``StorageError/badRequest(_:)`` or ``StorageError/cursorExpired(kinds:spaceKinds:)``
///   (400, 400, 410); a lock that stays held is
///   ``StorageError/unavailable(reason:)`` (503); anything else is a 500.
///
/// ```swift
/// let storage: any SyncStorage = try SQLiteStorage(path: "./sync-server.sqlite")
/// let results = try storage.push(user: "u1", [mutation])
/// let page = try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 500))
/// ```
public protocol SyncStorage: Sendable {
    /// Applies `mutations` in order for `user` in one transaction and returns
    /// one result each (an applied operation id answers a resend with its
    /// first result; refusals are not remembered).
    ///
    /// ```swift
    /// let results = try storage.push(user: "u1", mutations)
    /// ```
    func push(user: String, _ mutations: [Mutation]) throws(StorageError) -> [MutationResult]

    /// ``push(user:_:)``, applied only if this is the server `expectation`
    /// names and its latest stamp for `user` is not behind the one the
    /// device saw: else ``StorageError/serverMismatch(_:)``, decided inside
    /// the push's transaction, with nothing applied. A storage without an
    /// identity ignores the expectation (the default).
    ///
    /// ```swift
    /// let results = try storage.push(user: "u1", mutations, expecting: ServerExpectation(identity: known, seenStamp: seen))
    /// ```
    func push(user: String, _ mutations: [Mutation], expecting expectation: ServerExpectation?) throws(StorageError) -> [MutationResult]

    /// The database's identity, carried by every reply (`nil`: a storage
    /// without one, the default).
    ///
    /// ```swift
    /// let identity = storage.identity
    /// ```
    var identity: ServerIdentity? { get }

    /// One page of `user`'s rows after each kind's cursor, in `(updatedAt, id)`
    /// order, kinds in name order, at most `request.limit` rows.
    ///
    /// ```swift
    /// let page = try storage.pull(user: "u1", PullRequest(cursors: ["pin": cursor], limit: 500))
    /// ```
    ///
    /// The page carries the storage's ``identity``; a request whose
    /// ``PullRequest/expectation`` names another server, or a stamp past the
    /// user's latest, is refused with ``StorageError/serverMismatch(_:)``
    /// inside the pull's snapshot.
    ///
    /// - Throws: ``StorageError/cursorExpired(kinds:spaceKinds:)`` for cursors behind a
    ///   purged tombstone (unless `request.isResync`),
    ///   ``StorageError/badCursor(kind:reason:)`` or
    ///   ``StorageError/badRequest(_:)`` for a request that cannot be served.
    func pull(user: String, _ request: PullRequest) throws(StorageError) -> PullPage

    /// The live row of `user` with this kind and id, or `nil` (none, a
    /// tombstone, or another user's).
    ///
    /// ```swift
    /// let row = try storage.read(user: "u1", kind: "pin", id: "p1")
    /// ```
    func read(user: String, kind: String, id: String) throws(StorageError) -> ServerRow?

    /// The live row under `key` as `user` sees it (journals/PROTOCOL.md,
    /// "Read"): in `user`'s personal space, or in a shared space `user` is a
    /// member of; `nil` for none, a tombstone, or a space `user` is not a
    /// member of (whether or not it exists).
    ///
    /// ```swift
    /// let pin = try storage.read(user: "kid", RecordKey(kind: "pin", id: "p1", space: trip))
    /// ```
    func read(user: String, _ key: RecordKey) throws(StorageError) -> ServerRow?

    /// Applies one membership change of `user` in one transaction
    /// (journals/PROTOCOL.md, "Membership") and returns the space as `user`
    /// sees it after it, `nil` when `user` is no longer a member (leave,
    /// delete, removing themself). Observers hear of it
    /// (``StorageChange/membershipChanged(_:users:)``).
    ///
    /// ```swift
    /// let space = try storage.change(user: "dad", .create(SpaceID.random(), name: "Weekend pins"))
    /// ```
    ///
    /// - Throws: ``StorageError/spaceRefused(_:)`` with the refusal;
    ///   ``StorageError/badRequest(_:)`` for a name the protocol does not allow.
    @discardableResult
    func change(user: String, _ change: SpaceChange) throws(StorageError) -> Space?

    /// Every shared space `user` is a member of, ordered by id, as `user` sees each.
    ///
    /// ```swift
    /// for space in try storage.spaces(user: "kid") { print(space.name, space.role) }
    /// ```
    func spaces(user: String) throws(StorageError) -> [Space]

    /// Forgets tombstones stamped before `stamp` (of `kind`, or of every kind
    /// when `nil`) and moves each kind's horizon to the last one purged.
    ///
    /// ```swift
    /// let purged = try storage.purgeTombstones(olderThan: now - 30 * 86_400_000, kind: nil)
    /// ```
    ///
    /// - Returns: the number of tombstones purged.
    @discardableResult
    func purgeTombstones(olderThan stamp: Int64, kind: String?) throws(StorageError) -> Int

    /// Forgets at most `limit` remembered operation ids that are past the
    /// storage's operation retention, oldest first, in one short transaction,
    /// and returns how many it forgot (0 without a retention). Never one
    /// past the retention's cutoff younger than the retention. The server
    /// calls it in the background, batch after batch, until a batch comes
    /// back short.
    ///
    /// ```swift
    /// while try storage.pruneRememberedOperations(limit: 1_000) == 1_000 {}
    /// ```
    @discardableResult
    func pruneRememberedOperations(limit: Int) throws(StorageError) -> Int

    /// Closes idle database connections (the server calls it when it stops);
    /// later calls open new ones.
    ///
    /// ```swift
    /// storage.closeConnections()
    /// ```
    func closeConnections()

    /// Calls `observer` (from any thread) after each push that applied rows
    /// has committed, with its user (or shared space) and the kinds it
    /// wrote, and after each membership change, from now on
    /// until ``stopObservingChanges()``; it replaces an earlier observer.
    /// A storage that several server processes share reports the pushes of
    /// every one of them. Waits for changes (`POST /v1/sync/wait`) are woken this way.
    ///
    /// ```swift
    /// storage.observeChanges { change in registry.wake(change) }
    /// ```
    func observeChanges(_ observer: @escaping @Sendable (StorageChange) -> Void)

    /// Stops calling the observer (the server calls it when it stops).
    ///
    /// ```swift
    /// storage.stopObservingChanges()
    /// ```
    func stopObservingChanges()
}

import SyncJournalProtocol
import SyncJournalCore

extension LocalStore {
    /// The record as the app sees it, or `nil` if it does not exist or is
    /// deleted. A record of a shared space is named with its `space`.
    public func record(_ kind: String, id: String, in space: SpaceID = .personal) throws(StoreError) -> StoreRecord? {
        try checkReadable()
        return makeRecord(RecordKey(kind: kind, id: id, space: space))
    }

    /// Every visible record of `kind`, ordered by id (then space): those of
    /// `space`, or of every space the device holds when `space` is `nil`.
    public func records(_ kind: String, in space: SpaceID? = nil) throws(StoreError) -> [StoreRecord] {
        try checkReadable()
        var keys = Set(state.snapshot.keys.filter { $0.kind == kind && (space == nil || $0.space == space) })
        for key in state.outbox.keys where key.kind == kind && (space == nil || key.space == space) { keys.insert(key) }
        return keys.sorted(by: <).compactMap(makeRecord)
    }

    /// The shared spaces the user is a member of, as this device last heard
    /// from the server, ordered by id. (Every user also has a personal
    /// space, ``SpaceID/personal``, which is not listed.)
    ///
    /// ```swift
    /// for space in try await store.spaces() { print(space.name, space.role) }
    /// ```
    public func spaces() throws(StoreError) -> [Space] {
        try checkReadable()
        return state.spaces.values.sorted { $0.id < $1.id }
    }

    /// The shared space `id` as this device last heard of it, or `nil` when
    /// the user is not a member (as far as the device has synced).
    public func space(_ id: SpaceID) throws(StoreError) -> Space? {
        try checkReadable()
        return state.spaces[id]
    }

    private func makeRecord(_ key: RecordKey) -> StoreRecord? {
        guard let fields = state.visibleFields(of: key) else { return nil }
        return state.storeRecord(key, fields: fields)
    }

    /// The outbox as the store keeps it, in queue order.
    package func outboxOperations() throws(StoreError) -> [OutboxOperation] {
        try checkReadable()
        return state.outbox.operations
    }

    /// The outbox in queue order with each operation's delivery state
    /// (queued, in flight, sent, quarantined), attempts and last error. Next
    /// attempt times are the engine's (``SyncEngine/outboxStatus()``).
    public func outboxStatus() throws(StoreError) -> [OutboxEntryStatus] {
        try checkReadable()
        return state.outbox.operations.map { OutboxEntryStatus($0, inFlight: inFlight.contains($0.id)) }
    }

    /// The counts a sync status shows, without walking the queue.
    package func outboxCounts() throws(StoreError) -> OutboxCounts {
        try checkReadable()
        let quarantined = state.outbox.quarantinedCount
        // Conflicts are few (each waits for the app); merges are among them.
        var conflicts = 0
        for conflict in state.conflicts where !conflict.isMerge { conflicts += 1 }
        return OutboxCounts(pending: state.outbox.count - quarantined, quarantined: quarantined, conflicts: conflicts,
                            server: state.server)
    }

    /// Whether `id` is handed to a transport right now (memory only).
    package func isInFlight(_ id: OperationID) -> Bool { inFlight.contains(id) }

    /// The outcome the store remembers for `id` (memory only, the last few
    /// thousand), without waiting: for checks that run after several syncs.
    package func rememberedOutcome(of id: OperationID) -> OperationOutcome? {
        if case .final(let outcome)? = board.recentOutcome(of: id) { return outcome }
        return nil
    }

    /// Conflicts waiting for the app: local changes a policy let the
    /// server's copy override, or edits of a record the server deleted.
    /// Merges that lost nothing are not among them (``merges()``).
    public func conflicts() throws(StoreError) -> [ConflictRecord] {
        try checkReadable()
        return state.conflicts.filter { !$0.isMerge }
    }

    /// Edits the field-merging policy merged into a server copy that had
    /// changed meanwhile, losing nothing (``ConflictRecord/isMerge``), for
    /// an app that wants to say so. A merge needs no action: the sync after
    /// the one that sent its merged fields dismisses it (or
    /// ``dismissConflict(_:)`` does earlier).
    ///
    /// ```swift
    /// let store = try await LocalStore.open(path: "journals/merges.journal")
    /// for merge in try await store.merges() { print("merged", merge.operation.recordID) }
    /// try await store.close()
    /// ```
    public func merges() throws(StoreError) -> [ConflictRecord] {
        try checkReadable()
        return state.conflicts.filter(\.isMerge)
    }

    /// Quarantined operations, in queue order: each waits for
    /// ``retryQuarantined(_:)`` or ``discardQuarantined(_:)``, and later
    /// operations on its record wait behind it.
    public func quarantinedOperations() throws(StoreError) -> [OutboxEntryStatus] {
        try checkReadable()
        var result: [OutboxEntryStatus] = []
        state.outbox.forEach { entry in
            if entry.quarantined { result.append(OutboxEntryStatus(entry, inFlight: false)) }
            return true
        }
        return result
    }

    /// The queued operations on one record, in order (a create's id is here, to await its outcome).
    public func pendingOperations(kind: String, id: String) throws(StoreError) -> [OutboxEntryStatus] {
        try checkReadable()
        return state.outbox.operations(on: RecordKey(kind: kind, id: id)).map { OutboxEntryStatus($0, inFlight: inFlight.contains($0.id)) }
    }

    /// The edits that will never reach the server, oldest first, each with
    /// its reason: those the server refused for the user's role in their
    /// shared space (a viewer, or no longer a member), those queued in a
    /// space whose membership ended, and those versions before quarantine
    /// existed gave up on.
    ///
    /// ```swift
    /// for rejection in try await store.rejections() { print("not saved:", rejection.operation.key, rejection.reason) }
    /// ```
    public func rejections() throws(StoreError) -> [RejectionRecord] {
        try checkReadable()
        return state.rejections
    }

    /// The pull cursor of `kind`, if anything was pulled.
    package func cursor(for kind: String) throws(StoreError) -> PullCursor? {
        try checkReadable()
        return state.cursors[kind]
    }

    /// The whole state (for tools and tests).
    package func currentState() throws(StoreError) -> StoreState {
        try checkReadable()
        return state
    }
}

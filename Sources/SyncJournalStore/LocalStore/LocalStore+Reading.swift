import SyncJournalProtocol
import SyncJournalCore

extension LocalStore {
    /// The record as the app sees it, or `nil` if it does not exist or is deleted.
    public func record(_ kind: String, id: String) throws(StoreError) -> StoreRecord? {
        try checkReadable()
        return makeRecord(RecordKey(kind: kind, id: id))
    }

    /// Every visible record of `kind`, ordered by id.
    public func records(_ kind: String) throws(StoreError) -> [StoreRecord] {
        try checkReadable()
        var keys = Set(state.snapshot.keys.filter { $0.kind == kind })
        for key in state.outbox.keys where key.kind == kind { keys.insert(key) }
        return keys.sorted(by: <).compactMap(makeRecord)
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

    /// Whether `id` is handed to a transport right now (memory only).
    package func isInFlight(_ id: OperationID) -> Bool { inFlight.contains(id) }

    /// Conflicts waiting for the app.
    public func conflicts() throws(StoreError) -> [ConflictRecord] {
        try checkReadable()
        return state.conflicts
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

    /// Rejections journaled by versions before quarantine existed.
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

import SyncJournalProtocol
import SyncJournalCore

extension LocalStore {
    /// Makes several edits, across records and kinds, all or nothing, and
    /// returns them in the order they were staged.
    ///
    /// The body stages creates, updates and deletes on `tx`; nothing is
    /// written while it runs, and when it throws nothing is written at all.
    /// The store then checks every edit against the records as the edits
    /// before it leave them (an update of a record created earlier in the
    /// same transaction works), and journals them as one record with one
    /// `fdatasync`. They become visible together, and after a crash the
    /// journal holds all of them or none. When any edit fails, the write
    /// throws that edit's error (naming its kind and id) and nothing is
    /// journaled.
    ///
    /// ```swift
    /// let store = try await LocalStore.open(path: "journals/trip.journal")
    /// let edits = try await store.write { tx in
    ///     let trip = try tx.create("trip", fields: ["name": .string("Lisbon")])
    ///     try tx.create("stop", fields: ["trip": .string(trip.id), "name": .string("Alfama")])
    ///     try tx.update("trip", id: trip.id, changes: ["stops": .int(1)])
    /// }
    /// print(edits.count)   // 3
    /// ```
    ///
    /// Each edit stays its own queued operation (with its own ``Edit/operation``
    /// and base), and queued edits of the same record are still merged as
    /// single edits are. The server receives the operations in order, in one
    /// push where they fit, but applies each on its own: the server does not
    /// apply a transaction atomically.
    ///
    /// - Parameters:
    ///   - isolation: Where the body runs: the caller's actor, so it may use
    ///     the caller's state. Leave it out.
    ///   - body: Stages the edits. It runs once, before anything is written;
    ///     throwing from it abandons the write.
    /// - Throws: whatever the body throws (a ``StoreError`` from `tx`, or the
    ///   app's own error to abandon the write); ``StoreError/recordNotFound(_:)``
    ///   or ``StoreError/recordAlreadyExists(_:)`` for an edit that does not
    ///   apply; ``StoreError/invalidFields(kind:id:reason:)`` for an update
    ///   that would leave a record with more fields than the protocol allows;
    ///   ``StoreError/tooLarge(bytes:maximum:)`` when the edits do not
    ///   fit in one journal record; ``StoreError/journal(_:)``.
    @discardableResult
    public func write(isolation: isolated (any Actor)? = #isolation,
                      _ body: (inout WriteTransaction) throws -> Void) async throws -> [Edit] {
        let (makeRecordID, now, records) = try await transactionStart()
        var tx = WriteTransaction(makeRecordID: makeRecordID, queuedAt: now, state: records)
        try body(&tx)
        // The body's copy of the records ends here, so the store's next change to them copies nothing.
        let operations = tx.operations
        _ = consume tx
        return try await commit(operations)
    }

    /// What a transaction starts from: how ids are made, the time its edits are
    /// stamped with, and the records its body reads.
    private func transactionStart() throws(StoreError) -> (@Sendable () -> String, Int64, StoreState) {
        try checkReadable()
        return (options.makeRecordID, options.clock.wallTimeMilliseconds, state)
    }

    /// Journals the staged operations of a transaction as one record.
    private func commit(_ operations: [JournalOperation]) async throws(StoreError) -> [Edit] {
        try checkWritable()
        guard !operations.isEmpty else { return [] }
        try await submit { (staged) throws(StoreError) in try Self.transaction(operations, in: staged) }
        notifyEditObserver()
        return operations.map { Edit(kind: $0.entity, id: $0.recordID, space: $0.space, operation: $0.id) }
    }

    /// The event of a transaction decided against `staged`: each operation
    /// checked against the records as the operations before it leave them,
    /// given its base, and compacted with what is queued by then. A single
    /// operation is journaled as a plain edit, readable by every version.
    package static func transaction(_ operations: [JournalOperation], in staged: StoreState) throws(StoreError) -> [StoreEvent] {
        // Whether the user may write to a space is the same for every operation of
        // the transaction, so it is checked against the whole state, once.
        for space in Set(operations.map(\.space)) { try checkWritable(space, in: staged) }
        if operations.count == 1 { return [edit(try decided(operations[0], in: staged), in: staged)] }
        // Only the records the transaction touches: deciding costs the same in a large store.
        var part = staged.restricted(to: operations.map(\.key))
        var edits: [TransactionEdit] = []
        edits.reserveCapacity(operations.count)
        for staged in operations {
            let event = edit(try decided(staged, in: part), in: part)
            guard case .edit(let operation, let steps) = event else { continue }
            edits.append(TransactionEdit(operation: operation, compaction: steps))
            part.apply(event)
        }
        return [.transaction(edits)]
    }

    /// `operation` checked against `state` (a create needs a record nobody
    /// sees, an update or delete a visible one) and given its base.
    private static func decided(_ operation: JournalOperation, in state: StoreState) throws(StoreError) -> JournalOperation {
        var operation = operation
        let current = state.visibleFields(of: operation.key)
        switch operation.kind {
        case .create:
            if current != nil { throw .recordAlreadyExists(operation.key) }
            // A record created here has no base until the server confirms it.
            operation.baseUpdatedAt = nil
        case .update, .delete:
            guard let current else { throw .recordNotFound(operation.key) }
            if operation.kind == .update { try checkMergedFieldCount(current, operation.fields, key: operation.key) }
            operation.baseUpdatedAt = state.base(for: operation.key)
        }
        return operation
    }
}

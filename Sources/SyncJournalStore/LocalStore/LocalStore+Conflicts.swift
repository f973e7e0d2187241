import SyncJournalProtocol
import SyncJournalCore

extension LocalStore {
    /// Sets the conflict policy of `kind` (for conflicts found from now on).
    ///
    /// ```swift
    /// await store.setConflictPolicy(.mergeFields, for: "pin")
    /// ```
    public func setConflictPolicy(_ policy: ConflictPolicy, for kind: String) {
        options.conflictPolicies[kind] = policy
    }

    /// Sends a quarantined operation again, with a fresh budget of permanent failures.
    public func retryQuarantined(_ id: OperationID) async throws(StoreError) {
        try await submit { (staged) throws(StoreError) in
            guard staged.outbox[id]?.quarantined == true else { throw .notQuarantined(id) }
            return [.released(id)]
        }
        notifyEditObserver()
    }

    /// Drops a quarantined operation for good; the record shows the server's
    /// copy with any later queued edits on top.
    public func discardQuarantined(_ id: OperationID) async throws(StoreError) {
        try await submit { (staged) throws(StoreError) in
            guard staged.outbox[id]?.quarantined == true else { throw .notQuarantined(id) }
            return [.discarded(id)]
        }
        notifyEditObserver()
    }

    /// Removes a conflict from ``conflicts()`` (or a merge from ``merges()``)
    /// once the app has shown it; its resolution stands.
    public func dismissConflict(_ id: OperationID) async throws(StoreError) {
        try await submit { (staged) throws(StoreError) in
            guard staged.conflicts.contains(where: { $0.id == id }) else { throw .conflictNotFound(id) }
            return [.conflictDismissed(id)]
        }
    }

    /// Dismisses the merges whose merged fields are no longer queued (sent
    /// and answered, or there were none to send), in one journal write; a
    /// sync engine calls it as each sync starts, so a merge stays listed
    /// through the sync that found it and its merged fields' sync.
    package func dismissSettledMerges() async throws(StoreError) {
        func settled(_ state: StoreState) -> [OperationID] {
            state.conflicts.filter { conflict in
                conflict.isMerge && (conflict.resolution.replacement.map { state.outbox[$0.id] == nil } ?? true)
            }.map(\.id)
        }
        guard !settled(state).isEmpty else { return }
        try await submit { staged in settled(staged).map { .conflictDismissed($0) } }
    }

    /// Resolves a conflict the app's way, later (say, the user picked "keep
    /// mine"): `.keep(fields)` sets those field values (queued as an update
    /// of what the device shows now carrying the values that differ, or a
    /// create if the record is gone; fields left out keep their values),
    /// `.delete` deletes it, `.acceptServer` only dismisses. The conflict
    /// leaves ``conflicts()`` in the same journal record as the edit
    /// (`conflict-settled`), so a crash keeps both or neither.
    ///
    /// ```swift
    /// for conflict in try await store.conflicts() where userPrefersMine(conflict) {
    ///     try await store.resolveConflict(conflict.id, keeping: .keep(conflict.operation.fields))
    /// }
    /// ```
    ///
    /// The edit goes to the record's own space. Keeping or deleting in a
    /// shared space needs the role the device knows the user has now.
    ///
    /// - Throws: ``StoreError/conflictNotFound(_:)``;
    ///   ``StoreError/readOnlySpace(_:)`` or ``StoreError/noSuchSpace(_:)``
    ///   when the user may no longer write to the record's space (the
    ///   conflict stays, and `.acceptServer` still dismisses it);
    ///   validation errors; ``StoreError/journal(_:)``.
    public func resolveConflict(_ id: OperationID, keeping decision: ConflictDecision) async throws(StoreError) {
        let now = options.clock.wallTimeMilliseconds
        let newID = OperationID.random()
        try await submit { (staged) throws(StoreError) in
            guard let conflict = staged.conflicts.first(where: { $0.id == id }) else { throw .conflictNotFound(id) }
            let key = conflict.operation.key
            let visible = staged.visibleFields(of: key)
            var operation: JournalOperation?
            switch decision {
            case .acceptServer:
                break
            case .keep(let fields):
                try Self.validate(kind: key.kind, id: key.id, fields: fields)
                if let visible {
                    let changed = fields.filter { visible[$0.key] != $0.value }
                    if !changed.isEmpty {
                        operation = JournalOperation(id: newID, kind: .update, entity: key.kind, recordID: key.id, fields: changed,
                                                     baseUpdatedAt: staged.base(for: key), queuedAt: now, space: key.space)
                    }
                } else {
                    operation = JournalOperation(id: newID, kind: .create, entity: key.kind, recordID: key.id, fields: fields,
                                                 baseUpdatedAt: nil, queuedAt: now, space: key.space)
                }
            case .delete:
                if visible != nil {
                    operation = JournalOperation(id: newID, kind: .delete, entity: key.kind, recordID: key.id,
                                                 baseUpdatedAt: staged.base(for: key), queuedAt: now, space: key.space)
                }
            }
            guard let operation else { return [.conflictDismissed(id)] }
            // Keeping or deleting needs the role the device knows the user has now.
            try Self.checkWritable(key.space, in: staged)
            // One record: a torn write keeps both or neither.
            var dismissed = staged
            dismissed.apply(.conflictDismissed(id))
            guard case .edit(let edit, let steps) = Self.edit(operation, in: dismissed) else { return [.conflictDismissed(id)] }
            return [.conflictSettled(id, edit: edit, compaction: steps)]
        }
        notifyEditObserver()
    }
}

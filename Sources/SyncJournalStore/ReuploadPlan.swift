import SyncJournalProtocol

/// What a reconciliation queues so the server it now has gets every record
/// the device holds: re-uploads (each queued ahead of the record's own
/// queued edits, which keep their order) and queued edits given a new base
/// on the server's copy. Journaled as one record, so a crash keeps all of
/// it or none.
package struct ReuploadPlan: Sendable, Hashable {
    /// One queued edit's new base.
    package struct Rebase: Sendable, Hashable {
        /// The queued operation.
        package var operationID: OperationID
        /// Its base from now on: the server's stamp of the record.
        package var base: Int64

        /// Creates a rebase.
        package init(operationID: OperationID, base: Int64) {
            self.operationID = operationID
            self.base = base
        }
    }

    /// A queued operation that goes to the server under a new id.
    package struct Rename: Sendable, Hashable {
        /// Its id until now.
        package var from: OperationID
        /// Its id from now on.
        package var to: OperationID

        /// Creates a rename.
        package init(from: OperationID, to: OperationID) {
            self.from = from
            self.to = to
        }
    }

    /// New operations, each a create with the device's copy, or an update
    /// carrying all of its fields on the server's copy.
    package var uploads: [JournalOperation]
    /// Queued operations that now apply on the server's copy of their record.
    package var rebases: [Rebase]
    /// Queued operations that were sent (the server's database may
    /// remember their ids, with a result from before it changed) and now
    /// go after a re-upload or on a new base: they get new ids, so the
    /// server applies them to the record as it is now.
    package var renames: [Rename]

    /// Creates a plan.
    package init(uploads: [JournalOperation] = [], rebases: [Rebase] = [], renames: [Rename] = []) {
        self.uploads = uploads
        self.rebases = rebases
        self.renames = renames
    }

    /// Whether the plan changes nothing.
    package var isEmpty: Bool { uploads.isEmpty && rebases.isEmpty && renames.isEmpty }
}

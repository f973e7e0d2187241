import SyncJournalProtocol

/// A local edit the server refused because its copy had changed since the
/// edit's base, with what the store did about it. Surfaced to the app, never
/// silent: it stays in ``LocalStore/conflicts()`` until the app dismisses or
/// resolves it.
public struct ConflictRecord: Sendable, Hashable {
    /// The local edit.
    public var operation: JournalOperation
    /// The server's copy when the conflict was found; `nil` (or a tombstone)
    /// if the server deleted the record.
    public var server: ServerRow?
    /// The server's copy the device had edited, when the device knew it.
    public var baseRow: ServerRow?
    /// What the policy did.
    public var resolution: ConflictResolution

    /// Creates a conflict value. Without a resolution, the server's copy won
    /// (how conflicts journaled before policies existed are read).
    package init(operation: JournalOperation, server: ServerRow?, baseRow: ServerRow? = nil, resolution: ConflictResolution? = nil) {
        self.operation = operation
        self.server = server
        self.baseRow = baseRow
        self.resolution = resolution ?? ConflictResolution(
            strategy: .serverWins, replacement: nil,
            lostFields: operation.kind == .delete ? [] : operation.fields.keys.sorted())
    }

    /// The conflict's id: the refused operation's id.
    public var id: OperationID { operation.id }
    /// The base the device had: the operation's `baseUpdatedAt`.
    package var base: Int64? { operation.baseUpdatedAt }
    /// Which kind of conflict this is.
    public var shape: ConflictShape { ConflictShape(operation: operation.kind, server: server) }

    /// Whether this is a merge that lost nothing rather than a conflict:
    /// the field-merging policy kept every local change on the server's
    /// live copy, and (as that policy always does) every change the server
    /// had. Nothing needs the user, so a merge is listed by
    /// ``LocalStore/merges()``, never by ``LocalStore/conflicts()``, and a
    /// sync's outcome and status do not count it.
    public var isMerge: Bool {
        guard resolution.strategy == .mergeFields, resolution.lostFields.isEmpty, operation.kind != .delete,
              let server, !server.isTombstone else { return false }
        return true
    }
}

/// A local edit that will never reach the server: one the server refused
/// for the user's role in its shared space (a viewer, or no longer a
/// member), one queued in a shared space the user is no longer a member of
/// (its reason says so), or one that versions before quarantine existed gave
/// up on. Kept until the journal is deleted, so the app can show what was
/// not saved; other refusals are quarantined instead.
public struct RejectionRecord: Sendable, Hashable {
    /// The refused edit.
    public var operation: JournalOperation
    /// The server's reason.
    public var reason: String
    /// Failed attempts before it was given up.
    public var attempts: Int

    /// Creates a rejection value.
    package init(operation: JournalOperation, reason: String, attempts: Int) {
        self.operation = operation
        self.reason = reason
        self.attempts = attempts
    }
}

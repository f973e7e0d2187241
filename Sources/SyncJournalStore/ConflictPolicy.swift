import SyncJournalProtocol

/// How the store resolves a conflict of one kind of record. The policy runs
/// once, when the conflict is found; its result is journaled, so replay
/// reaches the same state without running it again.
///
/// Every policy surfaces the conflict (``LocalStore/conflicts()`` and
/// ``LocalStore/changes()``); none is silent. What each does per shape:
///
/// | shape | server wins (default) | client wins | merge fields |
/// |---|---|---|---|
/// | both updated | server copy stays; local fields reported lost | local changes requeued on the server copy | non-overlapping fields requeued, sets united, overlapping scalars lost |
/// | local update, server deleted | stays deleted; local fields lost | record re-created with the local view | as server wins |
/// | local delete, server updated | record returns with the server copy | delete requeued on the server copy | as server wins |
/// | local create, id exists | server copy stays; local fields lost | local fields requeued as an update | merged as for an update |
///
/// ```swift
/// var options = LocalStore.Options()
/// options.conflictPolicies["tag-list"] = .mergeFields
/// options.conflictPolicies["draft"] = .custom { conflict in
///     .keep(conflict.local ?? [:])   // or .acceptServer, .delete
/// }
/// ```
public enum ConflictPolicy: Sendable {
    /// The server's copy stays; the local edit is dropped from the view.
    case serverWins
    /// The local change is reapplied on top of the server's copy, with the
    /// server's stamp as the new base.
    case clientWins
    /// Changed fields that do not overlap merge; string sets take the union;
    /// an overlapping scalar field keeps the server's value and is reported lost.
    case mergeFields
    /// The app decides, given the base, local and server copies.
    case custom(@Sendable (ConflictInput) -> ConflictDecision)

    /// The strategy this policy records in the journal.
    package var strategy: ConflictResolution.Strategy {
        switch self {
        case .serverWins: return .serverWins
        case .clientWins: return .clientWins
        case .mergeFields: return .mergeFields
        case .custom: return .custom
        }
    }
}

/// What a custom resolver is given.
public struct ConflictInput: Sendable, Hashable {
    /// The local operation the server refused.
    public var operation: JournalOperation
    /// The server's copy the device had edited (`nil` for a create, or when
    /// the device no longer knows it).
    public var base: ServerRow?
    /// The server's current copy; `nil` when the server deleted the record.
    public var server: ServerRow?
    /// The record as the device showed it with this edit applied (`nil` for a delete).
    public var local: [String: FieldValue]?
    /// Which kind of conflict this is.
    public var shape: ConflictShape

    /// An input, as the store builds one (and as a test of a custom resolver can).
    ///
    /// ```swift
    /// let input = ConflictInput(operation: edit, base: base, server: server, local: ["name": .string("Cafe")])
    /// #expect(myResolver(input) == .keep(["name": .string("Cafe")]))
    /// ```
    package init(operation: JournalOperation, base: ServerRow?, server: ServerRow?, local: [String: FieldValue]?) {
        self.operation = operation
        self.base = base
        self.server = server
        self.local = local
        shape = ConflictShape(operation: operation.kind, server: server)
    }
}

/// What a custom resolver decides.
public enum ConflictDecision: Sendable, Hashable {
    /// Keep the server's copy (as ``ConflictPolicy/serverWins``).
    case acceptServer
    /// Keep these field values: queued as an update of the server's copy
    /// carrying only the fields whose values differ from it, or as a create
    /// when the server deleted it. Updates never remove fields, so a field
    /// the server has and this list leaves out keeps the server's value.
    case keep([String: FieldValue])
    /// Delete the record (queued against the server's copy; nothing when it is already deleted).
    case delete
}

/// The kinds of conflict a push can meet.
public enum ConflictShape: Sendable, Hashable, CustomStringConvertible {
    /// The device updated a record the server changed since the device's base.
    case bothUpdated
    /// The device updated a record the server deleted.
    case updatedButDeletedOnServer
    /// The device deleted a record the server changed since the device's base.
    case deletedButUpdatedOnServer
    /// The device created a record whose id the server already has.
    case createdButExistsOnServer
    /// The device created a record and the server reports it deleted.
    case createdButDeletedOnServer
    /// The device deleted a record the server also deleted.
    case bothDeleted

    /// The local operation and what the server had, such as `update/delete`.
    public var description: String {
        switch self {
        case .bothUpdated: return "update/update"
        case .updatedButDeletedOnServer: return "update/delete"
        case .deletedButUpdatedOnServer: return "delete/update"
        case .createdButExistsOnServer: return "create/exists"
        case .createdButDeletedOnServer: return "create/delete"
        case .bothDeleted: return "delete/delete"
        }
    }

    /// The shape of a conflict between `operation` and the server's copy `server`.
    package init(operation: OperationKind, server: ServerRow?) {
        let deleted = server == nil || server!.isTombstone
        switch (operation, deleted) {
        case (.update, false): self = .bothUpdated
        case (.update, true): self = .updatedButDeletedOnServer
        case (.delete, false): self = .deletedButUpdatedOnServer
        case (.delete, true): self = .bothDeleted
        case (.create, false): self = .createdButExistsOnServer
        case (.create, true): self = .createdButDeletedOnServer
        }
    }
}

import SyncJournalProtocol
import SyncJournalWire

/// The statements ``EncodedPushRules`` applies a push with: ``StorageQueries``'
/// row reads and writes, with the rows' fields kept encoded.
protocol EncodedStorageQueries {
    /// How this storage's statements fail.
    associatedtype Failure: Error

    /// The row stored under `key` for `owner` (``StorageRules/owner(in:user:)``),
    /// live or a tombstone, with the create it comes from.
    func encodedRow(_ key: RecordKey, owner: String) throws(Failure) -> (row: EncodedRow, createdBy: String?)?
    /// Inserts or replaces a row of `space`; `createdBy` is the id of the create whose record it is.
    func write(_ row: EncodedRow, in space: SpaceID, owner: String, createdBy: String?) throws(Failure)
    /// The stamp for the next version of a row of `space` whose stored version has stamp `previous`.
    func nextStamp(after previous: Int64?, in space: SpaceID) throws(Failure) -> Int64
    /// `user`'s role in shared space `space`, `nil` when not a member.
    func role(of user: String, in space: SpaceID) throws(Failure) -> SpaceRole?
    /// Whether `user` may read `content` (the push rule for attachments).
    func mayRead(_ content: ContentHash, user: String) throws(Failure) -> Bool
}

/// ``StorageRules``' push rules (journals/PROTOCOL.md, "Push") over
/// mutations and rows whose fields stay in the field codec's encoding, so
/// the server applies a large push without building its values. The
/// decisions are those of ``StorageRules/refusal(of:)`` and
/// ``StorageRules/applyWithinLimits(_:user:mayBeForgotten:_:)`` step for
/// step; only whole fields are looked at (their names, their count, an
/// update's merge). The server's tests push the same mutations through
/// both and compare the results.
///
/// Every row a mutation's result holds is in that mutation's space (a
/// record's space never changes) and carries it, so the reply's rows
/// name their shared space as ``StorageRules``' do.
enum EncodedPushRules {
    /// The refusal of a mutation no storage may apply, as ``StorageRules/refusal(of:)``.
    /// The field values' own rules (no empty name in an object, nesting
    /// within `FieldValue.maximumNestingDepth`) were enforced when the
    /// body was transcoded: a value breaking them never gets this far.
    static func refusal(of pushed: EncodedMutation) -> EncodedOutcome? {
        let mutation = pushed.mutation
        if let problem = ProtocolLimits.problem(kind: mutation.kind) ?? ProtocolLimits.problem(recordID: mutation.recordID)
            ?? ProtocolLimits.problem(fieldCount: pushed.fields.count, names: pushed.fields.names)
            ?? (pushed.fields.names.contains(where: \.isEmpty) ? "empty field name" : nil)
            ?? mutation.modelVersion.flatMap({ ProtocolLimits.problem(modelVersion: $0) }) {
            return .rejected(reason: problem, permanent: true)
        }
        return nil
    }

    /// Applies one mutation of `user`, as ``StorageRules/apply(_:user:mayBeForgotten:_:)``.
    static func apply<Queries: EncodedStorageQueries>(_ pushed: EncodedMutation, user: String, mayBeForgotten: Bool = false,
                                                      _ queries: Queries) throws(Queries.Failure) -> EncodedOutcome {
        if let refusal = refusal(of: pushed) { return refusal }
        let mutation = pushed.mutation
        let (kind, id, space) = (mutation.kind, mutation.recordID, mutation.space)
        if let refusal = try spaceRefusal(of: mutation, user: user, queries) { return refusal }
        let owner = StorageRules.owner(in: space, user: user)
        let existing = try queries.encodedRow(mutation.key, owner: owner)
        let live = existing.flatMap { $0.row.isTombstone ? nil : $0.row }
        let previous = existing?.row.updatedAt
        let modelVersion = StorageRules.highestModelVersion(existing?.row.modelVersion, mutation.modelVersion)
        switch mutation.op {
        case .create:
            let operationID = mutation.operationID.description
            if let existing, mayBeForgotten || existing.createdBy == operationID {
                return live == nil ? .conflict(server: nil) : .duplicate
            }
            if let live { return .conflict(server: live) }
            if let missing = try missingContent(in: pushed.fields, user: user, queries) { return missing }
            let row = EncodedRow(kind: kind, id: id, fields: pushed.fields, updatedAt: try queries.nextStamp(after: previous, in: space),
                                 modelVersion: modelVersion, space: space)
            try queries.write(row, in: space, owner: owner, createdBy: operationID)
            return .applied(row)
        case .update:
            guard var row = live else { return .conflict(server: nil) }
            guard mutation.baseUpdatedAt == row.updatedAt else { return .conflict(server: row) }
            if let missing = try missingContent(in: pushed.fields, user: user, queries) { return missing }
            row.fields = row.fields.merging(pushed.fields)
            if row.fields.count > ProtocolLimits.maximumFieldsPerRecord {
                let key = mutation.key
                return .rejected(reason: "the update would leave \(row.fields.count) fields in \(key), at most \(ProtocolLimits.maximumFieldsPerRecord) in a record",
                                 permanent: true)
            }
            row.updatedAt = try queries.nextStamp(after: previous, in: space)
            row.modelVersion = modelVersion
            try queries.write(row, in: space, owner: owner, createdBy: existing?.createdBy)
            return .applied(row)
        case .delete:
            if let live, mutation.baseUpdatedAt != live.updatedAt { return .conflict(server: live) }
            // Deleting a deleted row is harmless: its tombstone is the answer.
            if live == nil, let existing { return .applied(existing.row) }
            let stamp = try queries.nextStamp(after: previous, in: space)
            let tombstone = EncodedRow(kind: kind, id: id, updatedAt: stamp, deletedAt: stamp, modelVersion: modelVersion, space: space)
            // The tombstone keeps the create of the life it ends.
            try queries.write(tombstone, in: space, owner: owner, createdBy: existing?.createdBy)
            return .applied(tombstone)
        }
    }

    /// ``StorageRules/missingContent(in:user:_:)`` over encoded fields: the
    /// contents in the list's order, which is the name order that rule uses.
    private static func missingContent<Queries: EncodedStorageQueries>(in fields: EncodedFields, user: String,
                                                                       _ queries: Queries) throws(Queries.Failure) -> EncodedOutcome? {
        for content in fields.contents where !(try queries.mayRead(content, user: user)) {
            return .rejected(reason: MissingContentRefusal.reason(content), permanent: false)
        }
        return nil
    }

    /// ``StorageRules/spaceRefusal(of:user:_:)`` over the encoded statements.
    private static func spaceRefusal<Queries: EncodedStorageQueries>(of mutation: Mutation, user: String,
                                                                     _ queries: Queries) throws(Queries.Failure) -> EncodedOutcome? {
        guard !mutation.space.isPersonal else { return nil }
        guard let role = try queries.role(of: user, in: mutation.space) else {
            return .rejected(reason: SpaceWriteRefusal.noAccess(mutation.space).reason, permanent: true)
        }
        if !role.canWrite { return .rejected(reason: SpaceWriteRefusal.readOnly(mutation.space).reason, permanent: true) }
        return nil
    }
}

/// A storage that applies pushes whose fields stay encoded, as
/// ``SyncStorage/push(user:_:expecting:)`` applies them. The router sends
/// pushes this way when its storage can take them.
package protocol EncodedPushStorage: SyncStorage {
    /// Applies `mutations` in order for `user` in one transaction, with the
    /// semantics of ``SyncStorage/push(user:_:expecting:)``.
    func pushEncoded(user: String, _ mutations: [EncodedMutation], expecting expectation: ServerExpectation?) throws(StorageError) -> [EncodedMutationResult]
}

extension StorageChange {
    /// The changes a committed push of `mutations` stands for, with their
    /// encoded `results` (one each, in order): one for the personal space
    /// and one per shared space it wrote rows into.
    static func changes(user: String, mutations: [EncodedMutation], results: [EncodedMutationResult]) -> [StorageChange] {
        changes(user: user, applied: zip(mutations, results).lazy.compactMap { pushed, result -> (SpaceID, String)? in
            if case .applied(let row) = result.outcome { return (pushed.mutation.space, row.kind) }
            return nil
        })
    }
}

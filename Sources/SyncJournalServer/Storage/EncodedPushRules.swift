import SyncJournalProtocol
import SyncJournalWire

/// The statements ``EncodedPushRules`` applies a push with: ``StorageQueries``'
/// row reads and writes, with the rows' fields kept encoded.
protocol EncodedStorageQueries {
    /// How this storage's statements fail.
    associatedtype Failure: Error

    /// The row stored under `(kind, id)`, live or a tombstone, with its
    /// owner and the create it comes from.
    func encodedRow(kind: String, id: String) throws(Failure) -> (row: EncodedRow, owner: String, createdBy: String?)?
    /// Inserts or replaces a row; `createdBy` is the id of the create whose record it is.
    func write(_ row: EncodedRow, owner: String, createdBy: String?) throws(Failure)
    /// The stamp for the next version of a row whose stored version has stamp `previous`.
    func nextStamp(after previous: Int64?) throws(Failure) -> Int64
}

/// ``StorageRules``' push rules (journals/PROTOCOL.md, "Push") over
/// mutations and rows whose fields stay in the field codec's encoding, so
/// the server applies a large push without building its values. The
/// decisions are those of ``StorageRules/refusal(of:)`` and
/// ``StorageRules/applyWithinLimits(_:user:mayBeForgotten:_:)`` step for
/// step; only whole fields are looked at (their names, their count, an
/// update's merge). The server's tests push the same mutations through
/// both and compare the results.
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
        let (kind, id) = (mutation.kind, mutation.recordID)
        let existing = try queries.encodedRow(kind: kind, id: id)
        if let existing, existing.owner != user {
            return .rejected(reason: "forbidden: \(RecordKey(kind: kind, id: id)) belongs to another user", permanent: true)
        }
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
            let row = EncodedRow(kind: kind, id: id, fields: pushed.fields, updatedAt: try queries.nextStamp(after: previous),
                                 modelVersion: modelVersion)
            try queries.write(row, owner: user, createdBy: operationID)
            return .applied(row)
        case .update:
            guard var row = live else { return .conflict(server: nil) }
            guard mutation.baseUpdatedAt == row.updatedAt else { return .conflict(server: row) }
            row.fields = row.fields.merging(pushed.fields)
            if row.fields.count > ProtocolLimits.maximumFieldsPerRecord {
                let key = RecordKey(kind: kind, id: id)
                return .rejected(reason: "the update would leave \(row.fields.count) fields in \(key), at most \(ProtocolLimits.maximumFieldsPerRecord) in a record",
                                 permanent: true)
            }
            row.updatedAt = try queries.nextStamp(after: previous)
            row.modelVersion = modelVersion
            try queries.write(row, owner: user, createdBy: existing?.createdBy)
            return .applied(row)
        case .delete:
            if let live, mutation.baseUpdatedAt != live.updatedAt { return .conflict(server: live) }
            // Deleting a deleted row is harmless: its tombstone is the answer.
            if live == nil, let existing { return .applied(existing.row) }
            let stamp = try queries.nextStamp(after: previous)
            let tombstone = EncodedRow(kind: kind, id: id, updatedAt: stamp, deletedAt: stamp, modelVersion: modelVersion)
            // The tombstone keeps the create of the life it ends.
            try queries.write(tombstone, owner: user, createdBy: existing?.createdBy)
            return .applied(tombstone)
        }
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
    /// The change a committed push's encoded `results` stand for, or `nil` when it applied nothing.
    init?(user: String, results: [EncodedMutationResult]) {
        var kinds: Set<String> = []
        for result in results {
            if case .applied(let row) = result.outcome { kinds.insert(row.kind) }
        }
        guard !kinds.isEmpty else { return nil }
        self = .committed(user: user, kinds: kinds)
    }
}

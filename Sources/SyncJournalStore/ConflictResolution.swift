import SyncJournalCore
import SyncJournalProtocol

/// How a conflict was resolved, as journaled: the strategy, the operation
/// queued in place of the refused one (if any), and the local changes that
/// lost to the server's.
public struct ConflictResolution: Sendable, Hashable {
    /// The policy that ran.
    public enum Strategy: Sendable, Hashable, CustomStringConvertible {
        /// The server's copy stayed.
        case serverWins
        /// The local change was requeued on the server's copy.
        case clientWins
        /// Fields were merged.
        case mergeFields
        /// The app's resolver decided.
        case custom
        /// The app resolved it later with ``LocalStore/resolveConflict(_:keeping:)``.
        case app

        /// The strategy's code in journal records: 0 to 4.
        package var code: UInt8 {
            switch self {
            case .serverWins: return 0
            case .clientWins: return 1
            case .mergeFields: return 2
            case .custom: return 3
            case .app: return 4
            }
        }

        /// The strategy with this journal code, if there is one.
        package init?(code: UInt8) {
            switch code {
            case 0: self = .serverWins
            case 1: self = .clientWins
            case 2: self = .mergeFields
            case 3: self = .custom
            case 4: self = .app
            default: return nil
            }
        }

        /// `server-wins`, `client-wins`, `merge-fields`, `custom` or `app`.
        public var description: String {
            switch self {
            case .serverWins: return "server-wins"
            case .clientWins: return "client-wins"
            case .mergeFields: return "merge-fields"
            case .custom: return "custom"
            case .app: return "app"
            }
        }
    }

    /// The policy that ran.
    public var strategy: Strategy
    /// The operation queued in the refused one's place, with a new id and the
    /// server's stamp as its base; `nil` when the server's copy stands.
    public var replacement: JournalOperation?
    /// Local changes that did not survive (field names, sorted): fields left
    /// at a server value that differs from the local one. A field a policy
    /// kept or merged is not listed.
    public var lostFields: [String]

    /// Creates a resolution.
    package init(strategy: Strategy, replacement: JournalOperation?, lostFields: [String]) {
        self.strategy = strategy
        self.replacement = replacement
        self.lostFields = lostFields
    }

    /// Resolves a conflict with `policy`. Pure: the new operation's id and
    /// time are given, so the same input always gives the same resolution.
    ///
    /// ```swift
    /// let resolution = ConflictResolution.resolve(input, policy: .mergeFields, newID: .random(), now: now)
    /// ```
    package static func resolve(_ input: ConflictInput, policy: ConflictPolicy, newID: OperationID, now: Int64) -> ConflictResolution {
        let operation = input.operation
        let server = input.server.flatMap { $0.isTombstone ? nil : $0 }
        let localFields = operation.kind == .delete ? [] : operation.fields.keys.sorted()
        func requeue(_ kind: OperationKind, _ fields: [String: FieldValue], base: Int64?) -> JournalOperation {
            JournalOperation(id: newID, kind: kind, entity: operation.entity, recordID: operation.recordID,
                             fields: kind == .delete ? [:] : fields, baseUpdatedAt: base, queuedAt: now,
                             // The requeued edit is still the refused one's, by the same model version, in the same space.
                             modelVersion: operation.modelVersion, space: operation.space)
        }
        let serverWins = ConflictResolution(strategy: policy.strategy, replacement: nil, lostFields: localFields)

        switch policy {
        case .serverWins:
            return serverWins

        case .clientWins:
            switch (operation.kind, server) {
            case (.update, let row?), (.create, let row?):
                return ConflictResolution(strategy: .clientWins, replacement: requeue(.update, operation.fields, base: row.updatedAt), lostFields: [])
            case (.update, nil), (.create, nil):
                // The server deleted it: the record comes back as the device showed it.
                return ConflictResolution(strategy: .clientWins, replacement: requeue(.create, input.local ?? operation.fields, base: nil), lostFields: [])
            case (.delete, let row?):
                return ConflictResolution(strategy: .clientWins, replacement: requeue(.delete, [:], base: row.updatedAt), lostFields: [])
            case (.delete, nil):
                return ConflictResolution(strategy: .clientWins, replacement: nil, lostFields: [])
            }

        case .mergeFields:
            // A delete on either side leaves nothing to merge: the server's copy stands.
            guard operation.kind != .delete, let server else { return serverWins }
            let merge = mergeFields(local: operation.fields, base: input.base, server: server)
            let replacement = merge.fields.isEmpty ? nil : requeue(.update, merge.fields, base: server.updatedAt)
            return ConflictResolution(strategy: .mergeFields, replacement: replacement, lostFields: merge.lost)

        case .custom(let resolver):
            switch resolver(input) {
            case .acceptServer:
                return ConflictResolution(strategy: .custom, replacement: nil, lostFields: lostLocalFields(operation, kept: [:], server: server))
            case .keep(let fields):
                let lost = lostLocalFields(operation, kept: fields, server: server)
                if let server {
                    let changed = fields.filter { server.fields[$0.key] != $0.value }
                    let replacement = changed.isEmpty ? nil : requeue(.update, changed, base: server.updatedAt)
                    return ConflictResolution(strategy: .custom, replacement: replacement, lostFields: lost)
                }
                return ConflictResolution(strategy: .custom, replacement: requeue(.create, fields, base: nil), lostFields: lost)
            case .delete:
                let replacement = server.map { requeue(.delete, [:], base: $0.updatedAt) }
                return ConflictResolution(strategy: .custom, replacement: replacement, lostFields: [])
            }
        }
    }

    /// The fields of `operation` whose local value a custom resolution
    /// really loses: the record ends with the server's value (the policy
    /// kept no value of its own for the field, or kept the server's) and it
    /// differs from the local one. A field the policy kept with the local
    /// value, or merged into a value of its own, is not lost; nor is one
    /// whose local value the server already has.
    static func lostLocalFields(_ operation: JournalOperation, kept: [String: FieldValue], server: ServerRow?) -> [String] {
        guard operation.kind != .delete else { return [] }
        return operation.fields.keys.sorted().filter { name in
            let local = operation.fields[name]
            let theirs = server?.fields[name]
            let final = kept[name] ?? theirs
            return final != local && final == theirs
        }
    }

    /// Three-way merge of a local change set against the server's copy:
    /// a field the server did not change since `base` takes the local value;
    /// a field both changed keeps the server's value (lost), except string
    /// sets, which take the union (a union does not depend on
    /// order). Without a base, every field the server has with a value
    /// different from the local one counts as changed by both.
    static func mergeFields(local: [String: FieldValue], base: ServerRow?, server: ServerRow) -> (fields: [String: FieldValue], lost: [String]) {
        var merged: [String: FieldValue] = [:]
        var lost: [String] = []
        for name in local.keys.sorted() {
            let mine = local[name]!
            let theirs = server.fields[name]
            if theirs == mine { continue }
            // Updates never remove fields, so a field the server lacks is one it never set.
            let serverChanged = theirs != nil && (base.map { $0.fields[name] != theirs } ?? true)
            if !serverChanged {
                merged[name] = mine
            } else if case .stringSet(let a)? = theirs, case .stringSet(let b) = mine {
                let union = a.union(b)
                if union != a { merged[name] = .stringSet(union) }
            } else {
                lost.append(name)
            }
        }
        return (merged, lost)
    }
}

extension ConflictResolution {
    /// Appends the encoding: `u8` strategy, `u8` 1 and an operation if a
    /// replacement follows, `varint` n and n field names.
    package func encode(into writer: inout ByteWriter) {
        writer.writeUInt8(strategy.code)
        writer.writeUInt8(replacement == nil ? 0 : 1)
        replacement?.encode(into: &writer)
        writer.writeVarint(UInt64(lostFields.count))
        for name in lostFields { writer.writeString(name) }
    }

    /// Reads one resolution.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> ConflictResolution {
        let at = reader.position
        guard let strategy = Strategy(code: try reader.readUInt8()) else { throw .invalid("unknown conflict strategy", at: at) }
        let flagAt = reader.position
        let flag = try reader.readUInt8()
        if flag > 1 { throw .invalid("unknown replacement flag", at: flagAt) }
        let replacement = flag == 1 ? try JournalOperation.decode(from: &reader) : nil
        let count = try reader.readCount(minimumItemSize: 1)
        var lost: [String] = []
        for _ in 0..<count { lost.append(try reader.readString()) }
        return ConflictResolution(strategy: strategy, replacement: replacement, lostFields: lost)
    }
}

import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync
import SyncJournalPlatform

/// Shorthands for building mutations.
enum Mutations {
    static func create(_ id: String, kind: String = "pin", _ fields: [String: FieldValue] = ["title": .string("t")],
                       operation: OperationID = .random(), space: SpaceID = .personal) -> Mutation {
        Mutation(operationID: operation, kind: kind, op: .create, recordID: id, fields: fields, baseUpdatedAt: nil, space: space)
    }
    static func update(_ id: String, kind: String = "pin", base: Int64?, _ fields: [String: FieldValue],
                       operation: OperationID = .random(), space: SpaceID = .personal) -> Mutation {
        Mutation(operationID: operation, kind: kind, op: .update, recordID: id, fields: fields, baseUpdatedAt: base, space: space)
    }
    static func delete(_ id: String, kind: String = "pin", base: Int64?, operation: OperationID = .random(),
                       space: SpaceID = .personal) -> Mutation {
        Mutation(operationID: operation, kind: kind, op: .delete, recordID: id, fields: [:], baseUpdatedAt: base, space: space)
    }
}

extension MutationOutcome {
    /// The applied row, or `nil`.
    var appliedRow: ServerRow? {
        if case .applied(let row) = self { return row }
        return nil
    }
}

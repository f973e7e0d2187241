/// What an operation does to a record.
public enum OperationKind: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Creates the record with all its fields.
    case create = 1
    /// Changes some fields of the record.
    case update = 2
    /// Deletes the record.
    case delete = 3

    /// `create`, `update` or `delete`.
    public var description: String {
        switch self {
        case .create: return "create"
        case .update: return "update"
        case .delete: return "delete"
        }
    }
}

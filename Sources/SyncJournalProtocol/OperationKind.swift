/// What an operation does to a record.
public enum OperationKind: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Creates the record with all its fields.
    case create
    /// Changes some fields of the record.
    case update
    /// Deletes the record.
    case delete

    /// The operation's code in journal records: 1, 2 or 3.
    package var code: UInt8 {
        switch self {
        case .create: return 1
        case .update: return 2
        case .delete: return 3
        }
    }

    /// The operation with this journal code, if there is one.
    package init?(code: UInt8) {
        switch code {
        case 1: self = .create
        case 2: self = .update
        case 3: self = .delete
        default: return nil
        }
    }

    /// `create`, `update` or `delete`.
    public var description: String {
        switch self {
        case .create: return "create"
        case .update: return "update"
        case .delete: return "delete"
        }
    }
}

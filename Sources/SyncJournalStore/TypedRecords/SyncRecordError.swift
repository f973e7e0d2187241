/// Why a typed record could not be read or written.
public enum SyncRecordError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No visible record of this kind has this id.
    case notFound(kind: String, id: String)
    /// The value did not encode as fields: `path` names the property (`address.city`).
    case encodingFailed(kind: String, id: String, path: String, reason: String)
    /// The stored record does not decode as the type asked for.
    case undecodable(UndecodableRecord)
    /// An edit changed the record's id; the id of a record never changes.
    case idChanged(kind: String, from: String, to: String)
    /// A query about one kind was asked for records of another.
    case kindMismatch(query: String, record: String)
    /// The type's ``SyncRecord/migrations`` cannot be carried out (out of order, or a
    /// field name given to two fields); `reason` says which step.
    case invalidMigrations(kind: String, reason: String)
    /// The store refused the read or the edit.
    case store(StoreError)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .notFound(let kind, let id): return "no record \(kind)/\(id)"
        case .encodingFailed(let kind, let id, let path, let reason):
            return "\(kind)/\(id) does not encode" + (path.isEmpty ? "" : " at \(path)") + ": \(reason)"
        case .undecodable(let report): return "record does not decode: \(report)"
        case .idChanged(let kind, let from, let to): return "the id of \(kind)/\(from) cannot change to \(to)"
        case .kindMismatch(let query, let record): return "a query about \(query) cannot return records of kind \(record)"
        case .invalidMigrations(_, let reason): return reason
        case .store(let error): return error.description
        }
    }
}

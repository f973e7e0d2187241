import SyncJournalProtocol

/// The queued operations of one record, in order. Most records have one, held
/// inline; an array is made only for a second.
enum OperationIDList: Sendable {
    /// A single operation.
    case one(OperationID)
    /// Two or more, in queue order.
    case many([OperationID])

    /// The first operation.
    var first: OperationID {
        switch self {
        case .one(let only): return only
        case .many(let list): return list[0]
        }
    }

    /// Adds `id` at the end.
    mutating func append(_ id: OperationID) {
        switch self {
        case .one(let first): self = .many([first, id])
        case .many(var list):
            // Released by the enum first, so the array grows in place.
            self = .one(id)
            list.append(id)
            self = .many(list)
        }
    }

    /// The list without `id`, or `nil` when nothing is left.
    func removing(_ id: OperationID) -> OperationIDList? {
        switch self {
        case .one(let only): return only == id ? nil : self
        case .many(var list):
            if let position = list.firstIndex(of: id) { list.remove(at: position) }
            if list.isEmpty { return nil }
            return list.count == 1 ? .one(list[0]) : .many(list)
        }
    }

    /// The list with `id` replaced by `replacement` where it lies.
    func replacing(_ id: OperationID, with replacement: OperationID) -> OperationIDList {
        switch self {
        case .one(let only): return only == id ? .one(replacement) : self
        case .many(var list):
            if let position = list.firstIndex(of: id) { list[position] = replacement }
            return .many(list)
        }
    }
}

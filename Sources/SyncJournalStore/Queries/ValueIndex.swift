import SyncJournalProtocol

/// One field of one kind, indexed: the visible records' ids by the field's
/// value, the distinct values kept sorted in the query order, so an
/// equality, range or prefix lookup reads only the records it returns.
///
/// Every visible record of the kind is in the index once (a missing field
/// as ``FieldValue/null``).
package struct ValueIndex: Sendable {
    /// The distinct values, sorted by ``storageOrder(_:_:)``.
    private var sortedValues: [FieldValue] = []
    /// The ids holding each value.
    private var idsByValue: [FieldValue: Set<RecordKey>] = [:]
    /// Each indexed id's value.
    private var valueByID: [RecordKey: FieldValue] = [:]

    package init() {}

    /// How many records the index holds.
    package var count: Int { valueByID.count }

    /// The ids of every record in the index: the kind's visible records.
    package var ids: Dictionary<RecordKey, FieldValue>.Keys { valueByID.keys }

    /// Sets the value of record `id`, or removes it (`nil`: the record is not visible).
    package mutating func set(_ id: RecordKey, _ value: FieldValue?) {
        let old = valueByID[id]
        if old == value { return }
        if let old {
            idsByValue[old]?.remove(id)
            if idsByValue[old]?.isEmpty == true {
                idsByValue[old] = nil
                let position = lowerBound(of: old)
                if position < sortedValues.count, sortedValues[position] == old { sortedValues.remove(at: position) }
            }
        }
        valueByID[id] = value
        if let value {
            if idsByValue[value] == nil {
                idsByValue[value] = [id]
                sortedValues.insert(value, at: lowerBound(of: value))
            } else {
                idsByValue[value]!.insert(id)
            }
        }
    }

    /// The ids whose value lies in `range`.
    package func ids(in range: ValueRange) -> [RecordKey] {
        // The first value not below the lower bound in the query order.
        var position = 0, high = sortedValues.count
        while position < high {
            let middle = (position + high) / 2
            if range.isAboveLower(sortedValues[middle]) { high = middle } else { position = middle + 1 }
        }
        var result: [RecordKey] = []
        while position < sortedValues.count, range.isBelowUpper(sortedValues[position]) {
            result.append(contentsOf: idsByValue[sortedValues[position]] ?? [])
            position += 1
        }
        return result
    }

    /// The position of `value` in `sortedValues`, or where it goes.
    private func lowerBound(of value: FieldValue) -> Int {
        var low = 0, high = sortedValues.count
        while low < high {
            let middle = (low + high) / 2
            if Self.storageOrder(sortedValues[middle], value) < 0 { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The query order, with values it holds equal but that are different
    /// values (an integer and a double, two zeros or NaNs of a double) told
    /// apart by type and bit pattern: a strict order of distinct values.
    private static func storageOrder(_ a: FieldValue, _ b: FieldValue) -> Int {
        let order = a.queryOrder(b)
        if order != 0 || a == b { return order }
        if a.tag != b.tag { return a.tag < b.tag ? -1 : 1 }
        if case .double(let x) = a, case .double(let y) = b { return x.bitPattern < y.bitPattern ? -1 : 1 }
        return 0
    }
}

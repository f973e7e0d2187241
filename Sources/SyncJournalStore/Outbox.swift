import SyncJournalProtocol

/// The queue of local edits, in the order they were made, with an index per
/// record. Removing from anywhere is O(1) amortised (entries are tombstoned
/// in the order array and the array is compacted when half of it is dead),
/// so acknowledging the head of a queue of 100,000 costs no more than the tail.
package struct Outbox: Sendable {
    private var order: [OperationID] = []
    private var entries: [OperationID: OutboxOperation] = [:]
    private var byKey: [RecordKey: [OperationID]] = [:]
    private var dead = 0
    /// Every id before this index in `order` is removed. Acknowledgements
    /// remove from the front, so walks start here instead of stepping over
    /// up to half a queue of removed ids each time (a push of 100,000 queued
    /// operations spent a third of its time there).
    private var head = 0

    /// An empty queue.
    package init() {}

    /// Number of queued operations.
    package var count: Int { entries.count }
    /// Whether nothing is queued.
    package var isEmpty: Bool { entries.isEmpty }

    /// The queued operations in queue order.
    package var operations: [OutboxOperation] {
        order[head...].compactMap { entries[$0] }
    }

    /// Walks the queue in order until `body` returns false.
    package func forEach(_ body: (OutboxOperation) -> Bool) {
        for id in order[head...] {
            if let entry = entries[id], !body(entry) { return }
        }
    }

    /// The entry for `id`, if queued.
    package subscript(id: OperationID) -> OutboxOperation? { entries[id] }

    /// The record of the entry for `id`, if queued (read in place: the entry is not copied).
    func key(of id: OperationID) -> RecordKey? {
        guard let index = entries.index(forKey: id) else { return nil }
        return entries.values[index].key
    }

    /// The queued operations on one record, in order.
    package func operations(on key: RecordKey) -> [OutboxOperation] {
        (byKey[key] ?? []).compactMap { entries[$0] }
    }

    /// Records with at least one queued operation.
    package var keys: Dictionary<RecordKey, [OperationID]>.Keys { byKey.keys }

    /// Queues `entry` at the end.
    package mutating func append(_ entry: OutboxOperation) {
        // `index(forKey:)`, not `entries[id] == nil`: the subscript copies the entry out.
        guard entries.index(forKey: entry.id) == nil else { return }
        order.append(entry.id)
        entries[entry.id] = entry
        byKey[entry.key, default: []].append(entry.id)
    }

    /// Removes `id` wherever it is; returns the removed entry.
    @discardableResult
    package mutating func remove(_ id: OperationID) -> OutboxOperation? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        // The record's list is changed where it lies in the table (one lookup,
        // no copy of the list); an id is in its record's list once.
        if let index = byKey.index(forKey: entry.key) {
            if let position = byKey.values[index].firstIndex(of: id) { byKey.values[index].remove(at: position) }
            if byKey.values[index].isEmpty { byKey.remove(at: index) }
        }
        dead += 1
        if head < order.count && order[head] == id {
            while head < order.count && entries.index(forKey: order[head]) == nil { head += 1 }
        }
        if dead > 64 && dead > order.count / 2 {
            if dead == head {
                // Every removed id lies before the head (acknowledgements
                // remove from the front): drop that prefix without a lookup.
                order.removeFirst(head)
            } else {
                order.removeAll { entries.index(forKey: $0) == nil }
            }
            dead = 0
            head = 0
        }
        return entry
    }

    /// Puts `entry` in the place of `id` (same record, a new id): the
    /// queue order is kept, so later operations on the record still follow it.
    package mutating func replace(_ id: OperationID, with entry: OutboxOperation) {
        guard let old = entries[id], entries[entry.id] == nil || entry.id == id else { return }
        precondition(old.key == entry.key, "a replacement changes the same record")
        entries[id] = nil
        entries[entry.id] = entry
        if let index = order.firstIndex(of: id) { order[index] = entry.id }
        if var ids = byKey[entry.key], let index = ids.firstIndex(of: id) {
            ids[index] = entry.id
            byKey[entry.key] = ids
        }
    }

    /// Changes the entry for `id` in place (its position is kept; its record must not change).
    package mutating func update(_ id: OperationID, _ body: (inout OutboxOperation) -> Void) {
        // Changed in place: one lookup, and no copy of the entry written back.
        guard let index = entries.index(forKey: id) else { return }
        // Checked inside the one access to the entry: reading it back through
        // the table would copy the whole entry out, twice.
        func change(_ entry: inout OutboxOperation) {
            let key = entry.key
            body(&entry)
            precondition(entry.key == key && entry.id == id, "an outbox entry keeps its id and record")
        }
        change(&entries.values[index])
    }
}

extension Outbox: Equatable {
    /// Two queues are equal when they hold the same entries in the same order.
    package static func == (lhs: Outbox, rhs: Outbox) -> Bool {
        lhs.count == rhs.count && lhs.operations == rhs.operations
    }
}

extension Outbox: Hashable {
    package func hash(into hasher: inout Hasher) { hasher.combine(operations) }
}

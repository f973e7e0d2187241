import SyncJournalProtocol

/// The queue of local edits, in the order they were made, with an index per
/// operation and per record.
///
/// The entries themselves lie in an array in queue order, and the index maps
/// an operation id to its place: a walk of the queue (a checkpoint, a push)
/// reads memory in order instead of probing a hash table at random, and an
/// update changes the entry where it lies. Removing from anywhere is O(1)
/// amortised (the place is emptied, and the array is compacted when half of it
/// is empty), so acknowledging the head of a queue of 100,000 costs no more
/// than the tail.
package struct Outbox: Sendable {
    /// The entries in queue order; `nil` where one was removed.
    private var slots: [OutboxOperation?] = []
    /// The place of each queued operation in `slots`.
    private var index: [OperationID: Int] = [:]
    private var byKey: [RecordKey: [OperationID]] = [:]
    private var dead = 0
    /// Every place before this one is empty. Acknowledgements remove from
    /// the front, so walks start here instead of stepping over up to half a
    /// queue of removed entries each time.
    private var head = 0

    /// An empty queue.
    package init() {}

    /// Number of queued operations.
    package var count: Int { index.count }
    /// Whether nothing is queued.
    package var isEmpty: Bool { index.isEmpty }

    /// The queued operations in queue order.
    package var operations: [OutboxOperation] {
        var result: [OutboxOperation] = []
        result.reserveCapacity(count)
        for place in head..<slots.count { if let entry = slots[place] { result.append(entry) } }
        return result
    }

    /// Walks the queue in order until `body` returns false.
    package func forEach(_ body: (OutboxOperation) -> Bool) {
        for place in head..<slots.count {
            if let entry = slots[place], !body(entry) { return }
        }
    }

    /// The entry for `id`, if queued.
    package subscript(id: OperationID) -> OutboxOperation? {
        guard let place = index[id] else { return nil }
        return slots[place]
    }

    /// Whether `id` is queued.
    package func contains(_ id: OperationID) -> Bool { index[id] != nil }

    /// The record of the entry for `id`, if queued (read in place: the entry is not copied).
    package func key(of id: OperationID) -> RecordKey? {
        guard let place = index[id] else { return nil }
        return slots[place]?.operation.key
    }

    /// The queued operations on one record, in order.
    package func operations(on key: RecordKey) -> [OutboxOperation] {
        guard let ids = byKey[key] else { return [] }
        return ids.compactMap { self[$0] }
    }

    /// Records with at least one queued operation.
    package var keys: Dictionary<RecordKey, [OperationID]>.Keys { byKey.keys }

    /// Queues `entry` at the end.
    package mutating func append(_ entry: OutboxOperation) {
        let id = entry.id
        guard index[id] == nil else { return }
        index[id] = slots.count
        byKey[entry.key, default: []].append(id)
        slots.append(entry)
    }

    /// Removes `id` wherever it is; returns the removed entry.
    @discardableResult
    package mutating func remove(_ id: OperationID) -> OutboxOperation? {
        guard let place = index.removeValue(forKey: id), let entry = slots[place].take() else { return nil }
        // The record's list is changed where it lies in the table (one lookup,
        // no copy of the list); an id is in its record's list once.
        if let keyIndex = byKey.index(forKey: entry.key) {
            if let position = byKey.values[keyIndex].firstIndex(of: id) { byKey.values[keyIndex].remove(at: position) }
            if byKey.values[keyIndex].isEmpty { byKey.remove(at: keyIndex) }
        }
        dead += 1
        if index.isEmpty {
            // Nothing left: start over without walking anything.
            slots.removeAll(keepingCapacity: true)
            dead = 0
            head = 0
        } else if dead > 64 && dead > slots.count / 2 {
            compact()
        } else if place == head {
            while head < slots.count && slots[head] == nil { head += 1 }
        }
        return entry
    }

    /// Closes the gaps left by removals, keeping the order, and moves each
    /// remaining entry's place in the index.
    private mutating func compact() {
        var kept = 0
        for place in head..<slots.count {
            guard let entry = slots[place] else { continue }
            if kept != place {
                index[entry.id] = kept
                slots.swapAt(kept, place)
            }
            kept += 1
        }
        slots.removeLast(slots.count - kept)
        dead = 0
        head = 0
    }

    /// Puts `entry` in the place of `id` (same record, a new id): the
    /// queue order is kept, so later operations on the record still follow it.
    package mutating func replace(_ id: OperationID, with entry: OutboxOperation) {
        guard let place = index[id], let old = slots[place], index[entry.id] == nil || entry.id == id else { return }
        precondition(old.key == entry.key, "a replacement changes the same record")
        index[id] = nil
        index[entry.id] = place
        slots[place] = entry
        if let keyIndex = byKey.index(forKey: entry.key), let position = byKey.values[keyIndex].firstIndex(of: id) {
            byKey.values[keyIndex][position] = entry.id
        }
    }

    /// Changes the entry for `id` in place (its position is kept; its record must not change).
    package mutating func update(_ id: OperationID, _ body: (inout OutboxOperation) -> Void) {
        guard let place = index[id], slots[place] != nil else { return }
        let key = slots[place]!.operation.key
        body(&slots[place]!)
        precondition(slots[place]!.key == key && slots[place]!.id == id, "an outbox entry keeps its id and record")
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

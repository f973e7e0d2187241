import SyncJournalProtocol

/// The queue of local edits, in the order they were made, with an index per
/// operation and per record.
///
/// The entries lie in chunks in queue order, and the index maps an operation
/// id to its place: a walk of the queue (a checkpoint, a push) reads memory in
/// order, and an update changes the entry where it lies. Removing from
/// anywhere is O(1) amortised (the place is emptied, and the queue is
/// compacted when half of it is empty). Chunks and split indexes let two
/// copies of a queue (the decided and the visible state) share everything a
/// write has not touched.
package struct Outbox: Sendable {
    /// The entries in queue order; `nil` where one was removed.
    private var chunks = OutboxSlotChunks()
    /// Places used in `chunks`.
    private var placeCount: Int { chunks.count }
    /// The place of each queued operation.
    private var index = PartitionedMap<OperationID, Int32>()
    /// Each record's queued operations, in order.
    private var byKey = PartitionedMap<RecordKey, OperationIDList>()
    /// Failure histories of the entries that have one.
    private var failures = PartitionedMap<OperationID, FailureHistory>()
    private var dead = 0
    /// Every place before this one is empty. Acknowledgements remove from
    /// the front, so walks start here instead of stepping over up to half a
    /// queue of removed entries each time.
    private var head = 0
    /// Queued operations held back from sending, kept as they change so a
    /// status costs the same however long the queue is.
    package private(set) var quarantinedCount = 0

    /// An empty queue.
    package init() {}

    /// Number of queued operations.
    package var count: Int { index.count }
    /// Whether nothing is queued.
    package var isEmpty: Bool { index.isEmpty }

    @inline(__always)
    private func slotAt(_ place: Int) -> OutboxSlot? {
        chunks[place]
    }

    /// The entry a slot holds, with its failure history.
    private func entry(_ slot: OutboxSlot) -> OutboxOperation {
        guard slot.hasFailures, let history = failures[slot.operation.id] else {
            return OutboxOperation(operation: slot.operation, sent: slot.sent, quarantined: slot.quarantined)
        }
        return OutboxOperation(operation: slot.operation, sent: slot.sent, attempts: history.attempts, lastError: history.lastError,
                               permanentFailures: history.permanentFailures, lastFailure: history.lastFailure,
                               quarantined: slot.quarantined)
    }

    /// The slot for `entry`, its failure history put in the side table.
    private mutating func store(_ entry: OutboxOperation, hadFailures: Bool) -> OutboxSlot {
        let history = FailureHistory(of: entry)
        if let history {
            failures[entry.id] = history
        } else if hadFailures {
            failures[entry.id] = nil
        }
        return OutboxSlot(operation: entry.operation, sent: entry.sent, quarantined: entry.quarantined, hasFailures: history != nil)
    }

    /// The queued operations in queue order.
    package var operations: [OutboxOperation] {
        var result: [OutboxOperation] = []
        result.reserveCapacity(count)
        forEach { entry in
            result.append(entry)
            return true
        }
        return result
    }

    /// Walks the queue in order until `body` returns false.
    package func forEach(_ body: (OutboxOperation) -> Bool) {
        forEachSlot { slot in body(entry(slot)) }
    }

    /// Walks, in queue order, the first queued operation of each record
    /// until `body` returns false: the ones that decide whether their record
    /// is ready to send. No record set is kept: each entry knows whether an
    /// earlier one of its record is queued.
    package func forEachFirstOfRecord(_ body: (OutboxOperation) -> Bool) {
        forEachSlot { slot in slot.follows || body(entry(slot)) }
    }

    /// Walks the queued slots in order, chunk by chunk, until `body` returns false.
    private func forEachSlot(_ body: (OutboxSlot) -> Bool) {
        chunks.forEach(from: head, body)
    }

    /// The entry for `id`, if queued.
    package subscript(id: OperationID) -> OutboxOperation? {
        guard let place = index[id], let slot = slotAt(Int(place)) else { return nil }
        return entry(slot)
    }

    /// Whether `id` is queued.
    package func contains(_ id: OperationID) -> Bool { index[id] != nil }

    /// The record of the entry for `id`, if queued (read in place: the entry is not copied).
    package func key(of id: OperationID) -> RecordKey? {
        guard let place = index[id] else { return nil }
        return slotAt(Int(place))?.operation.key
    }

    /// The queued operations on one record, in order.
    package func operations(on key: RecordKey) -> [OutboxOperation] {
        guard let ids = byKey[key] else { return [] }
        switch ids {
        case .one(let id): return self[id].map { [$0] } ?? []
        case .many(let list): return list.compactMap { self[$0] }
        }
    }

    /// Records with at least one queued operation.
    package var keys: some Sequence<RecordKey> { byKey.keys }

    /// Queues `entry` at the end.
    package mutating func append(_ entry: OutboxOperation) {
        let id = entry.id
        let place = placeCount
        let added = index.modify(id) { (slot: inout Int32?) -> Bool in
            guard slot == nil else { return false }
            slot = Int32(truncatingIfNeeded: place)
            return true
        }
        guard added else { return }
        let follows = byKey.modify(entry.key) { list -> Bool in
            guard list != nil else {
                list = .one(id)
                return false
            }
            list!.append(id)
            return true
        }
        var stored = store(entry, hadFailures: false)
        stored.follows = follows
        if stored.quarantined { quarantinedCount += 1 }
        chunks.append(stored)
    }

    /// Removes `id` wherever it is; returns the removed entry.
    @discardableResult
    package mutating func remove(_ id: OperationID) -> OutboxOperation? {
        guard let history = failures.isEmpty ? nil : failures[id] else {
            return removeNoting(id).map { OutboxOperation(operation: $0.slot.operation, sent: $0.slot.sent, quarantined: $0.slot.quarantined) }
        }
        return removeNoting(id).map {
            OutboxOperation(operation: $0.slot.operation, sent: $0.slot.sent, attempts: history.attempts, lastError: history.lastError,
                            permanentFailures: history.permanentFailures, lastFailure: history.lastFailure,
                            quarantined: $0.slot.quarantined)
        }
    }

    /// Removes `id` wherever it is; returns what its place held (the
    /// failure history is dropped) and whether other operations of its
    /// record are still queued. An acknowledgement needs no more.
    mutating func removeNoting(_ id: OperationID) -> (slot: OutboxSlot, recordStillQueued: Bool)? {
        guard let stored = index.removeValue(forKey: id) else { return nil }
        let place = Int(stored)
        guard let slot = chunks[place].take() else { return nil }
        if slot.hasFailures { failures[id] = nil }
        if slot.quarantined { quarantinedCount -= 1 }
        // An id is in its record's list once. When it led the list, the next
        // operation of the record leads now.
        let (recordStillQueued, newLeader) = byKey.modify(slot.operation.key) { list -> (Bool, OperationID?) in
            guard let current = list else { return (false, nil) }
            list = current.removing(id)
            guard let rest = list else { return (false, nil) }
            return (true, current.first == id ? rest.first : nil)
        }
        if let newLeader, let leaderPlace = index[newLeader] {
            let at = Int(leaderPlace)
            chunks[at]?.follows = false
        }
        dead += 1
        if index.isEmpty {
            // Nothing left: start over without walking anything.
            chunks.removeAll()
            dead = 0
            head = 0
        } else if dead > 64 && dead > placeCount / 2 {
            compact()
        } else if place == head {
            while head < placeCount && slotAt(head) == nil { head += 1 }
        }
        return (slot, recordStillQueued)
    }

    /// Closes the gaps left by removals, keeping the order, and moves each
    /// remaining entry's place in the index.
    private mutating func compact() {
        var kept = OutboxSlotChunks()
        for place in head..<placeCount {
            guard let slot = slotAt(place) else { continue }
            if kept.count != place { index[slot.operation.id] = Int32(truncatingIfNeeded: kept.count) }
            kept.append(slot)
        }
        chunks = kept
        dead = 0
        head = 0
    }

    /// Puts `entry` in the place of `id` (same record, a new id): the
    /// queue order is kept, so later operations on the record still follow it.
    package mutating func replace(_ id: OperationID, with entry: OutboxOperation) {
        guard let stored = index[id], let old = slotAt(Int(stored)), entry.id == id || index[entry.id] == nil else { return }
        precondition(old.operation.key == entry.key, "a replacement changes the same record")
        let place = Int(stored)
        if old.hasFailures { failures[id] = nil }
        index[id] = nil
        index[entry.id] = stored
        var replacement = store(entry, hadFailures: false)
        replacement.follows = old.follows
        quarantinedCount += (replacement.quarantined ? 1 : 0) - (old.quarantined ? 1 : 0)
        chunks[place] = replacement
        byKey.modify(entry.key) { list in
            guard let current = list else { return }
            list = current.replacing(id, with: entry.id)
        }
    }

    /// Sets or clears the sent mark of `id` where it lies.
    package mutating func setSent(_ id: OperationID, _ sent: Bool) {
        guard let stored = index[id] else { return }
        let place = Int(stored)
        chunks[place]?.sent = sent
    }

    /// Changes the entry for `id` in place (its position is kept; its record must not change).
    package mutating func update(_ id: OperationID, _ body: (inout OutboxOperation) -> Void) {
        guard let stored = index[id] else { return }
        let place = Int(stored)
        // Taken out while it changes, so the operation's storage is not shared with the slot.
        guard let slot = chunks[place].take() else { return }
        var changed = entry(slot)
        body(&changed)
        precondition(changed.key == slot.operation.key && changed.id == id, "an outbox entry keeps its id and record")
        let unchangedHistory = !slot.hasFailures && changed.attempts == 0 && changed.lastError == nil
            && changed.permanentFailures == 0 && changed.lastFailure == nil
        var updated = unchangedHistory
            ? OutboxSlot(operation: changed.operation, sent: changed.sent, quarantined: changed.quarantined, hasFailures: false)
            : store(changed, hadFailures: slot.hasFailures)
        updated.follows = slot.follows
        quarantinedCount += (updated.quarantined ? 1 : 0) - (slot.quarantined ? 1 : 0)
        chunks[place] = updated
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

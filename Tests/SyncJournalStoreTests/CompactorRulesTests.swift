import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import Testing

// The compactor's rules, straight through `Compactor.steps`
// (the pure function the store journals the result of).

@Suite("Compactor rules (Compactor.steps)")
struct CompactorRulesTests {
    static func op(_ kind: OperationKind, _ fields: [String: FieldValue] = [:], record: String = "r",
                   base: Int64? = nil, queuedAt: Int64 = 1) -> JournalOperation {
        JournalOperation(id: .random(), kind: kind, entity: "pin", recordID: record, fields: fields,
                         baseUpdatedAt: base, queuedAt: queuedAt)
    }

    /// The steps for `edit` appended after `queued`, and the queue those steps leave.
    static func compact(_ edit: JournalOperation, after queued: [OutboxOperation]) -> (steps: [CompactionStep], queue: [OutboxOperation]) {
        var outbox = Outbox()
        for entry in queued { outbox.append(entry) }
        outbox.append(OutboxOperation(operation: edit))
        let steps = Compactor.steps(for: edit, in: outbox)
        for step in steps {
            switch step {
            case .remove(let id): outbox.remove(id)
            case .replace(let id, let replacement): outbox.update(id) { $0.operation = replacement }
            }
        }
        return (steps, outbox.operations)
    }

    static func unsent(_ operation: JournalOperation) -> OutboxOperation { OutboxOperation(operation: operation) }
    static func sent(_ operation: JournalOperation) -> OutboxOperation { OutboxOperation(operation: operation, sent: true) }

    @Test("compactor: create never sent + delete → both vanish")
    func unsentCreateAndDeleteVanish() {
        let create = Self.op(.create, ["name": .string("Tapas bar")])
        let delete = Self.op(.delete)
        let (steps, queue) = Self.compact(delete, after: [Self.unsent(create)])
        #expect(steps == [.remove(create.id), .remove(delete.id)])
        #expect(queue.isEmpty)
    }

    @Test("compactor: create sent (in flight or before a crash) + delete → the delete stays queued behind the create")
    func sentCreateAndDeleteStay() {
        let create = Self.op(.create, ["name": .string("Tapas bar")])
        let delete = Self.op(.delete)
        let (steps, queue) = Self.compact(delete, after: [Self.sent(create)])
        #expect(steps.isEmpty)
        #expect(queue.map(\.id) == [create.id, delete.id])
        // A failed attempt does not make it "unsent" again.
        let retried = OutboxOperation(operation: create, sent: true, attempts: 2, lastError: "timeout")
        #expect(Self.compact(delete, after: [retried]).steps.isEmpty)
    }

    @Test("compactor: create never sent + updates → one create with the merged fields (later values win)")
    func unsentCreateAbsorbsUpdates() {
        let create = Self.op(.create, ["name": .string("Cafe"), "rating": .int(3)], queuedAt: 10)
        let update = Self.op(.update, ["rating": .int(5), "visited": .bool(true)], queuedAt: 20)
        let (steps, queue) = Self.compact(update, after: [Self.unsent(create)])
        var merged = create
        merged.fields = ["name": .string("Cafe"), "rating": .int(5), "visited": .bool(true)]
        #expect(steps == [.replace(create.id, with: merged), .remove(update.id)])
        #expect(queue.count == 1)
        #expect(queue.first?.operation == merged)
        #expect(queue.first?.operation.kind == .create)
        #expect(queue.first?.operation.baseUpdatedAt == nil)
        #expect(queue.first?.operation.queuedAt == 10)

        // A second update merges again into the same create.
        let second = Self.op(.update, ["name": .null])
        let (_, again) = Self.compact(second, after: queue)
        #expect(again.map(\.id) == [create.id])
        #expect(again.first?.operation.fields == ["name": .null, "rating": .int(5), "visited": .bool(true)])
    }

    @Test("compactor: update + update, neither sent → one update with the merged changes and the FIRST update's base")
    func unsentUpdatesMergeWithFirstBase() {
        let first = Self.op(.update, ["name": .string("One"), "rating": .int(1)], base: 100)
        let second = Self.op(.update, ["rating": .int(2)], base: 200)
        let (steps, queue) = Self.compact(second, after: [Self.unsent(first)])
        #expect(steps.count == 2)
        #expect(steps.last == .remove(second.id))
        #expect(queue.count == 1)
        #expect(queue.first?.id == first.id)
        #expect(queue.first?.operation.fields == ["name": .string("One"), "rating": .int(2)])
        #expect(queue.first?.operation.baseUpdatedAt == 100)
    }

    @Test("compactor: update never sent + delete → one delete carrying the update's base")
    func unsentUpdateAndDeleteBecomeDeleteWithUpdatesBase() {
        let update = Self.op(.update, ["name": .string("One")], base: 100)
        let delete = Self.op(.delete, base: 200)
        let (steps, queue) = Self.compact(delete, after: [Self.unsent(update)])
        #expect(steps.first == .remove(update.id))
        #expect(queue.count == 1)
        #expect(queue.first?.id == delete.id)
        #expect(queue.first?.operation.kind == .delete)
        #expect(queue.first?.operation.baseUpdatedAt == 100)
        #expect(queue.first?.operation.fields.isEmpty == true)

        // Same base already: the update simply goes.
        let sameBase = Self.op(.delete, base: 100)
        #expect(Self.compact(sameBase, after: [Self.unsent(update)]).steps == [.remove(update.id)])
    }

    @Test("compactor: an operation that was sent is never merged into or removed: edits made while a request is in flight queue behind it")
    func sentOperationsAreNeverTouched() {
        let sentUpdate = Self.sent(Self.op(.update, ["name": .string("One")], base: 100))
        for edit in [Self.op(.update, ["name": .string("Two")], base: 100), Self.op(.delete, base: 100)] {
            let (steps, queue) = Self.compact(edit, after: [sentUpdate])
            #expect(steps.isEmpty, "\(edit.kind) after a sent update")
            #expect(queue.map(\.id) == [sentUpdate.id, edit.id])
            #expect(queue.first == sentUpdate)
        }
        let sentCreate = Self.sent(Self.op(.create, ["name": .string("One")]))
        let update = Self.op(.update, ["name": .string("Two")])
        #expect(Self.compact(update, after: [sentCreate]).steps.isEmpty)

        // Behind a sent operation, later unsent edits still merge with each other.
        let queued = Self.unsent(update)
        let later = Self.op(.update, ["rating": .int(4)])
        let (_, queue) = Self.compact(later, after: [sentCreate, queued])
        #expect(queue.map(\.id) == [sentCreate.id, update.id])
        #expect(queue.last?.operation.fields == ["name": .string("Two"), "rating": .int(4)])
        #expect(queue.first == sentCreate)
    }

    @Test("compactor: a delete behind a sent create and an unsent update removes the update and stays queued behind the create")
    func deleteBehindSentCreateAndUnsentUpdate() {
        let create = Self.sent(Self.op(.create, ["name": .string("One")]))
        let update = Self.unsent(Self.op(.update, ["name": .string("Two")]))
        let delete = Self.op(.delete)
        let (steps, queue) = Self.compact(delete, after: [create, update])
        #expect(steps == [.remove(update.id)])
        #expect(queue.map(\.id) == [create.id, delete.id])
        #expect(queue.last?.operation.baseUpdatedAt == nil)
    }

    @Test("compactor: an unsent create, an unsent update and a delete all vanish")
    func unsentCreateUpdateDeleteVanish() {
        let create = Self.unsent(Self.op(.create, ["name": .string("One")]))
        let update = Self.unsent(Self.op(.update, ["name": .string("Two")]))
        let delete = Self.op(.delete)
        let (steps, queue) = Self.compact(delete, after: [create, update])
        #expect(Set(steps) == [.remove(create.id), .remove(update.id), .remove(delete.id)])
        #expect(queue.isEmpty)
    }

    @Test("compactor: edits of other records are never touched, and a create after a delete (re-create) is not compacted")
    func otherRecordsAndRecreateAreLeftAlone() {
        let otherCreate = Self.unsent(Self.op(.create, ["name": .string("Other")], record: "other"))
        let delete = Self.op(.delete, base: 100)
        #expect(Self.compact(delete, after: [otherCreate]).steps.isEmpty)
        let otherKind = Self.unsent(JournalOperation(id: .random(), kind: .create, entity: "note", recordID: "r", queuedAt: 1))
        #expect(Self.compact(delete, after: [otherKind]).steps.isEmpty)

        let recreate = Self.op(.create, ["name": .string("Again")])
        let (steps, queue) = Self.compact(recreate, after: [Self.unsent(delete)])
        #expect(steps.isEmpty)
        #expect(queue.map(\.id) == [delete.id, recreate.id])
    }

    @Test("compactor: a first edit with nothing queued before it is not compacted")
    func firstEditIsNotCompacted() {
        for kind in OperationKind.allCases {
            #expect(Self.compact(Self.op(kind, base: kind == .create ? nil : 100), after: []).steps.isEmpty)
        }
    }
}

import SyncJournalProtocol
import SyncJournalCore
@testable import SyncJournalStore
import Testing

@Suite("Outbox layout")
struct OutboxLayoutTests {
    /// What a queue of `model` shows for one record: its operations in order.
    static func operations(of key: RecordKey, in model: [OutboxOperation]) -> [OutboxOperation] {
        model.filter { $0.key == key }
    }

    @Test("updates, failure histories, sent marks, quarantines, replacements and removals across many chunks read back as a plain array of entries does, the quarantined count included",
          arguments: [11, 12, 13])
    func matchesArrayModel(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var outbox = Outbox()
        var model: [OutboxOperation] = []
        var next = 0
        for step in 0..<4_000 {
            let choice = model.isEmpty ? 0 : Int.random(in: 0..<8, using: &generator)
            switch choice {
            case 0, 1, 2:
                // Appends outnumber removals, so the queue spans several chunks.
                let entry = OutboxOrderTests.operation(next, record: Int.random(in: 0..<400, using: &generator))
                next += 1
                outbox.append(entry)
                model.append(entry)
            case 3:
                let index = Int.random(in: 0..<4, using: &generator) == 0 ? Int.random(in: 0..<model.count, using: &generator) : 0
                let id = model[index].id
                let key = model[index].key
                model.remove(at: index)
                let removed = outbox.removeNoting(id)
                #expect(removed?.slot.operation.id == id)
                #expect(removed?.recordStillQueued == model.contains { $0.key == key })
            case 4:
                let index = Int.random(in: 0..<model.count, using: &generator)
                let kind: FailureKind = [.transient, .permanent, .deletedOrNoAccess][step % 3]
                let body: (inout OutboxOperation) -> Void = {
                    $0.attempts += 1
                    $0.lastError = "failure \(step)"
                    $0.lastFailure = kind
                    if kind != .transient { $0.permanentFailures += 1 }
                    if kind == .deletedOrNoAccess { $0.quarantined = true }
                }
                outbox.update(model[index].id, body)
                body(&model[index])
            case 5:
                let index = Int.random(in: 0..<model.count, using: &generator)
                outbox.update(model[index].id) {
                    $0.quarantined = false
                    $0.permanentFailures = 0
                }
                model[index].quarantined = false
                model[index].permanentFailures = 0
            case 6:
                let index = Int.random(in: 0..<model.count, using: &generator)
                let sent = !model[index].sent
                outbox.setSent(model[index].id, sent)
                model[index].sent = sent
            default:
                // A new id in the place of an old one, on the same record.
                let index = Int.random(in: 0..<model.count, using: &generator)
                var replacement = OutboxOrderTests.operation(next, record: 0)
                next += 1
                replacement.operation.entity = model[index].operation.entity
                replacement.operation.recordID = model[index].operation.recordID
                outbox.replace(model[index].id, with: replacement)
                model[index] = replacement
            }
            #expect(outbox.quarantinedCount == model.count { $0.quarantined }, "step \(step)")
            if step % 97 == 0 || step > 3_950 {
                #expect(outbox.operations == model)
                var firsts: [OutboxOperation] = []
                outbox.forEachFirstOfRecord { firsts.append($0); return true }
                var seen = Set<RecordKey>()
                #expect(firsts == model.filter { seen.insert($0.key).inserted })
                for entry in model.prefix(20) {
                    #expect(outbox[entry.id] == entry)
                    #expect(outbox.operations(on: entry.key) == Self.operations(of: entry.key, in: model))
                }
            }
        }
        #expect(outbox.count == model.count)
        #expect(model.count > 600)
        #expect(model.contains { $0.quarantined }, "the walk quarantined some")
    }

    @Test("a copy of a queue keeps its entries while the original changes in the chunks they share")
    func copiesAreIndependent() {
        var outbox = Outbox()
        for n in 0..<1_000 { outbox.append(OutboxOrderTests.operation(n, record: n)) }
        let copy = outbox
        let before = copy.operations
        for entry in before.prefix(300) { outbox.remove(entry.id) }
        outbox.setSent(before[500].id, true)
        outbox.append(OutboxOrderTests.operation(5_000, record: 7))
        #expect(copy.operations == before)
        #expect(copy.count == 1_000)
        #expect(outbox.count == 701)
        #expect(outbox[before[500].id]?.sent == true)
        #expect(copy[before[500].id]?.sent == false)
    }

    @Test("a queued operation's place holds at most 80 bytes")
    func slotSize() {
        #expect(MemoryLayout<OutboxSlot?>.stride <= 80)
        #expect(MemoryLayout<JournalOperation>.size <= 78)
    }
}

import SyncJournalProtocol
import SyncJournalCore
import SyncJournalStore
import Testing

@Suite("Outbox order")
struct OutboxOrderTests {
    static func operation(_ n: Int, record: Int) -> OutboxOperation {
        var generator = SeededGenerator(seed: UInt64(n + 1))
        return OutboxOperation(operation: JournalOperation(id: .random(using: &generator), kind: .update, entity: "pin",
                                                           recordID: "r\(record)", fields: ["n": .int(Int64(n))],
                                                           baseUpdatedAt: 1, queuedAt: Int64(n)))
    }

    @Test("removing from the front, the middle and the back, mixed with appends, keeps queue order in operations and forEach",
          arguments: [1, 2, 3, 4, 5])
    func removalsKeepOrder(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var outbox = Outbox()
        var model: [OutboxOperation] = []
        var next = 0
        for _ in 0..<3_000 {
            if model.isEmpty || Int.random(in: 0..<3, using: &generator) == 0 {
                let entry = Self.operation(next, record: Int.random(in: 0..<50, using: &generator))
                next += 1
                outbox.append(entry)
                model.append(entry)
            } else {
                // Mostly the head, as acknowledgements do; sometimes anywhere.
                let index = Int.random(in: 0..<4, using: &generator) == 0 ? Int.random(in: 0..<model.count, using: &generator) : 0
                #expect(outbox.remove(model[index].id) == model[index])
                model.remove(at: index)
            }
            var walked: [OutboxOperation] = []
            outbox.forEach { walked.append($0); return true }
            #expect(walked == model)
        }
        #expect(outbox.operations == model)
        #expect(outbox.count == model.count)
    }
}

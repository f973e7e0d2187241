import SyncJournalProtocol
import SyncJournalCore
@testable import SyncJournalStore
import Testing

@Suite("Partitioned map")
struct PartitionedMapTests {
    static func key(_ n: Int) -> RecordKey { RecordKey(kind: n % 3 == 0 ? "pin" : "note", id: "r\(n)") }

    @Test("sets, removals and in-place changes through several doublings of the parts read back as a dictionary does")
    func matchesDictionary() {
        var generator = SeededGenerator(seed: 5)
        var map = PartitionedMap<RecordKey, Int>()
        var model: [RecordKey: Int] = [:]
        for step in 0..<20_000 {
            let key = Self.key(Int.random(in: 0..<6_000, using: &generator))
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                #expect(map.removeValue(forKey: key) == model.removeValue(forKey: key))
            case 1:
                map.modify(key) { value in value = value.map { $0 + 1 } }
                model[key] = model[key].map { $0 + 1 }
            default:
                #expect(map.updateValue(step, forKey: key) == model.updateValue(step, forKey: key))
            }
        }
        #expect(map.count == model.count)
        #expect(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }) == model)
        #expect(Set(map.keys) == Set(model.keys))
        for (key, value) in model { #expect(map[key] == value) }
        #expect(map.filter { $0.key.kind == "pin" } == model.filter { $0.key.kind == "pin" })
    }

    @Test("two maps with the same entries are equal and hash alike however many parts each has")
    func equalityIgnoresParts() {
        var grown = PartitionedMap<RecordKey, Int>()
        for n in 0..<5_000 { grown[Self.key(n)] = n }
        for n in 10..<5_000 { grown[Self.key(n)] = nil }
        var small = PartitionedMap<RecordKey, Int>()
        for n in (0..<10).reversed() { small[Self.key(n)] = n }
        #expect(grown == small)
        #expect(grown.hashValue == small.hashValue)
        small[Self.key(3)] = 99
        #expect(grown != small)
    }

    @Test("a copy keeps its entries while the original changes")
    func copiesAreIndependent() {
        var map = PartitionedMap<OperationID, Int32>()
        var generator = SeededGenerator(seed: 9)
        let ids = (0..<2_000).map { _ in OperationID.random(using: &generator) }
        for (n, id) in ids.enumerated() { map[id] = Int32(n) }
        let copy = map
        for id in ids.prefix(1_000) { map[id] = nil }
        map[ids[1_500]] = -1
        #expect(copy.count == 2_000)
        #expect(copy[ids[0]] == 0)
        #expect(copy[ids[1_500]] == 1_500)
        #expect(map.count == 1_000)
        #expect(map[ids[1_500]] == -1)
    }
}

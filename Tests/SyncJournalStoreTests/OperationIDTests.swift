import Testing
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting

@Suite("OperationID")
struct OperationIDTests {
    private func isVersion4(_ id: OperationID) -> Bool {
        id.bytes.count == 16 && id.bytes[6] >> 4 == 0x4 && id.bytes[8] >> 6 == 0b10
    }

    @Test("random ids are distinct and have the UUID version 4 layout")
    func randomIDsAreDistinctVersion4() {
        var seen = Set<OperationID>()
        for _ in 0..<10_000 {
            let id = OperationID.random()
            #expect(isVersion4(id))
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
    }

    @Test("seeded random ids are reproducible, distinct and version 4")
    func seededRandomIDsAreReproducible() {
        var first = SeededGenerator(seed: 42)
        var second = SeededGenerator(seed: 42)
        let a = (0..<1_000).map { _ in OperationID.random(using: &first) }
        let b = (0..<1_000).map { _ in OperationID.random(using: &second) }
        #expect(a == b)
        #expect(Set(a).count == a.count)
        #expect(a.allSatisfy(isVersion4))
    }

    @Test("the version and variant bits are forced whatever the generator returns")
    func versionBitsForcedForExtremeGenerators() {
        struct Constant: RandomNumberGenerator {
            let value: UInt64
            mutating func next() -> UInt64 { value }
        }
        var zeros = Constant(value: 0)
        var ones = Constant(value: .max)
        let low = OperationID.random(using: &zeros)
        let high = OperationID.random(using: &ones)
        #expect(isVersion4(low))
        #expect(isVersion4(high))
        #expect(low.description == "00000000-0000-4000-8000-000000000000")
        #expect(high.description == "ffffffff-ffff-4fff-bfff-ffffffffffff")
    }

    @Test("description is lowercase 8-4-4-4-12 hex of the bytes")
    func descriptionFormat() {
        #expect(fixedID.description == "00010203-0405-0607-0809-0a0b0c0d0e0f")
    }

    @Test("description parses back to the same id")
    func descriptionParsesBack() {
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<1_000 {
            let id = OperationID.random(using: &rng)
            #expect(OperationID(id.description) == id)
        }
        #expect(OperationID(fixedID.description) == fixedID)
    }

    @Test("ids keep their bytes and order as their bytes do")
    func bytesAndOrderRoundTrip() {
        var rng = SeededGenerator(seed: 13)
        var previous: OperationID?
        for _ in 0..<2_000 {
            // Ids sharing a first half, so the second word decides some comparisons.
            var bytes = rng.bytes(16)
            if let previous, Bool.random(using: &rng) { bytes.replaceSubrange(0..<8, with: previous.bytes[0..<8]) }
            let id = OperationID(bytes: bytes)!
            #expect(id.bytes == bytes)
            if let previous {
                #expect((id < previous) == bytes.lexicographicallyPrecedes(previous.bytes))
                #expect((id == previous) == (bytes == previous.bytes))
            }
            previous = id
        }
    }

    @Test("uppercase hex parses to the same id")
    func uppercaseParses() {
        #expect(OperationID("00010203-0405-0607-0809-0A0B0C0D0E0F") == fixedID)
    }

    static let badStrings: [String] = [
        "",
        "not a uuid",
        "00010203-0405-0607-0809-0a0b0c0d0e0",     // one digit short
        "00010203-0405-0607-0809-0a0b0c0d0e0f0",   // one digit long
        "00010203-0405-0607-0809-0a0b0c0d0e0g",    // not hex
        "00010203040506070809-0a0b0c0d0e0f",       // missing dashes
        "000102030405060708090a0b0c0d0e0f",        // no dashes at all
        " 00010203-0405-0607-0809-0a0b0c0d0e0f",   // leading space
        "00010203-0405-0607-0809-0a0b0c0d0e0f\n",  // trailing newline
        "0001020é-0405-0607-0809-0a0b0c0d0e0f",    // non-ASCII
        "{00010203-0405-0607-0809-0a0b0c0d0e0f}",
    ]

    @Test("malformed strings give nil", arguments: badStrings)
    func badStringsGiveNil(text: String) {
        #expect(OperationID(text) == nil)
    }

    /// `OperationID.init?(_:)` filters out every dash and parses pairs with `UInt8(_:radix:)`, which accepts a sign.
    static let acceptedBadStrings: [String] = [
        "+0010203-0405-0607-0809-0a0b0c0d0e0f",    // '+' sign taken as part of a hex pair
        "00010203-0405-0607-0809-+a0b0c0d0e0f",
        "0001020304050607-0809-0a0b-0c0d0e0f-",    // dashes in the wrong places
        "----00010203040506070809a0b0c0d0e0f0",
    ]

    @Test("strings with a sign or misplaced dashes give nil", arguments: acceptedBadStrings)
    func signsAndMisplacedDashesGiveNil(text: String) {
        #expect(OperationID(text) == nil)
    }

    @Test("init(bytes:) requires exactly 16 bytes", arguments: [0, 1, 15, 17, 32])
    func bytesInitRequires16(count: Int) {
        #expect(OperationID(bytes: [UInt8](repeating: 0, count: count)) == nil)
        #expect(OperationID(bytes: [UInt8](repeating: 0, count: 16)) != nil)
    }

    @Test("ids order by their bytes")
    func idsOrderByBytes() {
        let low = OperationID(bytes: [0] + [UInt8](repeating: 0xFF, count: 15))!
        let high = OperationID(bytes: [1] + [UInt8](repeating: 0, count: 15))!
        #expect(low < high)
        #expect(!(high < low))
        #expect(!(low < low))
    }

    @Test("random() from four tasks at once: 200,000 ids, all distinct, each with the UUID version 4 layout")
    func randomIDsAreDistinctAcrossTasks() async {
        let batches = await withTaskGroup(of: [OperationID].self) { group in
            for _ in 0..<4 { group.addTask { (0..<50_000).map { _ in OperationID.random() } } }
            var all: [[OperationID]] = []
            for await batch in group { all.append(batch) }
            return all
        }
        let ids = batches.flatMap { $0 }
        #expect(ids.count == 200_000)
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.bytes[6] >> 4 == 4 && $0.bytes[8] >> 6 == 0b10 })
        // Every bit outside the version and variant varies.
        var seenSet = [UInt8](repeating: 0, count: 16)
        var seenClear = [UInt8](repeating: 0, count: 16)
        for id in ids.prefix(1_000) {
            for (i, byte) in id.bytes.enumerated() {
                seenSet[i] |= byte
                seenClear[i] |= ~byte
            }
        }
        let fixed: [Int: UInt8] = [6: 0xF0, 8: 0xC0]
        for i in 0..<16 {
            let mask = ~(fixed[i] ?? 0)
            #expect(seenSet[i] & mask == mask && seenClear[i] & mask == mask, "byte \(i) has bits that never change")
        }
    }
}

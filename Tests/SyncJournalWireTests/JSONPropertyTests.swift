import SyncJournalWire
import Testing

/// Seeded random documents: what the writer writes, the parser reads back
/// exactly; random damage never crashes the parser.
@Suite("JSON: seeded round trips and random damage")
struct JSONPropertyTests {
    /// SplitMix64, so a failing seed reproduces.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let alphabet: [Character] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\u{0}", "\u{1F}", "é", "€", "𝄞", "\u{301}", "\u{7F}", "\u{FFFF}"]

    static func string(_ g: inout Generator) -> String {
        String((0..<Int.random(in: 0...6, using: &g)).map { _ in alphabet.randomElement(using: &g)! })
    }

    static func value(_ g: inout Generator, depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth > 4 ? 5 : 7), using: &g) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &g))
        case 2: return .integer([Int64.min, .max, 0, -1, Int64.random(in: .min ... .max, using: &g)].randomElement(using: &g)!)
        case 3:
            let bits = UInt64.random(in: 0 ... .max, using: &g)
            let number = Double(bitPattern: bits)
            return .number(number.isFinite ? number : Double(Int32.random(in: .min ... .max, using: &g)) / 7)
        case 4: return .string(string(&g))
        case 5: return .array((0..<Int.random(in: 0...4, using: &g)).map { _ in value(&g, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &g) { members[string(&g)] = value(&g, depth: depth + 1) }
            return .object(members)
        }
    }

    @Test("a random document encodes, parses back equal, and re-encodes to the same bytes (seeds 1-300)")
    func roundTrips() throws {
        for seed in UInt64(1)...300 {
            var g = Generator(state: seed)
            let document = Self.value(&g, depth: 0)
            let bytes = document.encoded()
            let back = try JSONValue(parsing: bytes)
            #expect(back == document, "seed \(seed)")
            #expect(back.encoded() == bytes, "seed \(seed)")
        }
    }

    @Test("random byte flips, insertions and deletions of valid documents never crash the parser (seeds 1-300)")
    func damage() {
        var failures = 0
        for seed in UInt64(1)...300 {
            var g = Generator(state: seed)
            var bytes = Self.value(&g, depth: 0).encoded()
            for _ in 0..<Int.random(in: 1...3, using: &g) {
                let index = Int.random(in: 0...bytes.count, using: &g)
                switch Int.random(in: 0..<3, using: &g) {
                case 0 where index < bytes.count: bytes[index] = UInt8.random(in: 0...255, using: &g)
                case 1: bytes.insert(UInt8.random(in: 0...255, using: &g), at: index)
                default: if index < bytes.count { bytes.remove(at: index) }
                }
            }
            do { _ = try JSONValue(parsing: bytes) } catch { failures += 1 }
        }
        #expect(failures > 100)
    }

    @Test("random bytes never crash the parser")
    func noise() {
        var g = Generator(state: 99)
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...40, using: &g)).map { _ in
                // Mostly JSON's own punctuation, so the parser goes deep.
                Bool.random(using: &g) ? Array("{}[],:\"\\0123456789-+.eEtrufalsn u".utf8).randomElement(using: &g)! : UInt8.random(in: 0...255, using: &g)
            }
            _ = try? JSONValue(parsing: bytes)
        }
    }
}

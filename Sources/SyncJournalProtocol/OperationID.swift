/// The idempotency key of an operation: 16 random bytes, printed as a UUID.
public struct OperationID: Sendable, Hashable, CustomStringConvertible {
    // The 16 bytes as two big-endian words, stored inline: replay decodes and
    // hashes several ids per record, and an array of bytes cost an allocation
    // per id and sixteen hasher rounds per lookup. Big-endian, so comparing
    // the words compares the bytes in order.
    private let first: UInt64
    private let second: UInt64

    /// The raw bytes (always 16).
    package var bytes: [UInt8] {
        (0..<16).map { i in UInt8(truncatingIfNeeded: (i < 8 ? first : second) >> UInt64(56 - 8 * (i % 8))) }
    }

    /// Wraps 16 bytes; `nil` for any other count.
    package init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        func word(_ start: Int) -> UInt64 { bytes[start..<start + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        self.init(first: word(0), second: word(8))
    }

    /// An id from its bytes as two big-endian words: the first eight bytes, then the last eight.
    package init(first: UInt64, second: UInt64) {
        self.first = first
        self.second = second
    }

    /// The id's bytes as two big-endian words, as ``init(first:second:)`` takes them.
    package var words: (first: UInt64, second: UInt64) { (first, second) }

    /// A random id from `generator` (deterministic generators make reproducible journals).
    package static func random(using generator: inout some RandomNumberGenerator) -> OperationID {
        // Two 64-bit draws, not sixteen 8-bit ones: the system generator costs a call each.
        // Each draw's bytes, low byte first, are the id's bytes (as before the
        // words were stored), so a seeded generator gives the same ids.
        let first = generator.next().byteSwapped
        let second = generator.next().byteSwapped
        // Version 4 in the high nibble of byte 6, variant 0b10 in the top bits of byte 8.
        return OperationID(first: first & ~0xF000 | 0x4000, second: second & ~(0xC0 << 56) | 0x80 << 56)
    }

    /// Parses the `8-4-4-4-12` hex form.
    public init?(_ text: String) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return nil }
        func digit(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        var index = 0
        while index < 36 {
            if [8, 13, 18, 23].contains(index) {
                guard utf8[index] == UInt8(ascii: "-") else { return nil }
                index += 1
                continue
            }
            guard let high = digit(utf8[index]), let low = digit(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.init(bytes: bytes)
    }

    /// The `8-4-4-4-12` lowercase hex form.
    public var description: String {
        let digits = Array("0123456789abcdef")
        var text = ""
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append("-") }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return text
    }

    /// Byte order: the order of the ids' bytes, first byte first.
    package static func < (lhs: OperationID, rhs: OperationID) -> Bool { (lhs.first, lhs.second) < (rhs.first, rhs.second) }
}

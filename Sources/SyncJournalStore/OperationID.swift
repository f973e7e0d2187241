import SyncJournalCore

/// The idempotency key of an operation: 16 random bytes, printed as a UUID.
public struct OperationID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The raw bytes (always 16).
    public let bytes: [UInt8]

    /// Wraps 16 bytes; `nil` for any other count.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// A new random id (UUID version 4 layout).
    public static func random() -> OperationID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A random id from `generator` (deterministic generators make reproducible journals).
    public static func random(using generator: inout some RandomNumberGenerator) -> OperationID {
        // Two 64-bit draws, not sixteen 8-bit ones: the system generator costs a call each.
        var bytes = [UInt8](repeating: 0, count: 16)
        let high = generator.next()
        let low = generator.next()
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: high >> UInt64(8 * i))
            bytes[8 + i] = UInt8(truncatingIfNeeded: low >> UInt64(8 * i))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return OperationID(bytes: bytes)!
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
        self.bytes = bytes
    }

    /// The `8-4-4-4-12` lowercase hex form.
    public var description: String { JournalID(bytes: bytes)!.description }

    public static func < (lhs: OperationID, rhs: OperationID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}

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
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return OperationID(bytes: bytes)!
    }

    /// Parses the `8-4-4-4-12` hex form.
    public init?(_ text: String) {
        let hex = text.filter { $0 != "-" }
        guard hex.count == 32, text.count == 36 else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.bytes = bytes
    }

    /// The `8-4-4-4-12` lowercase hex form.
    public var description: String { JournalID(bytes: bytes)!.description }

    public static func < (lhs: OperationID, rhs: OperationID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}

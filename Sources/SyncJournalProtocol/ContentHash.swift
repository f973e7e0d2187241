/// The name of an attachment's content: the SHA-256 digest of its bytes,
/// written as 64 lowercase hex digits (its only spelling). The same bytes
/// always have the same name, so content stored twice is kept once, and a
/// file or chunk whose bytes do not hash to its name is known to be damaged.
///
/// ```swift
/// let hash = ContentHash("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")!   // no bytes
/// print(hash.hex.prefix(8))   // e3b0c442
/// ```
public struct ContentHash: Sendable, Hashable, CustomStringConvertible {
    /// The 32 digest bytes.
    public let bytes: [UInt8]

    /// The name of the empty content (no bytes). Every server holds it and
    /// every user may read it, so it is never uploaded nor downloaded.
    public static let empty = ContentHash(bytes: [
        0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
        0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
    ])!

    /// The hash of 32 digest bytes, or `nil` for another count.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// The hash written as 64 lowercase hex digits, or `nil` for any other
    /// text (uppercase included: one spelling, so names compare as text).
    public init?(_ hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self.bytes = bytes
    }

    /// 64 lowercase hex digits.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// ``hex``.
    public var description: String { hex }

    /// Byte order, which is the order of ``hex`` as text: the order contents
    /// are listed and sent in, the same on every run.
    package static func < (lhs: ContentHash, rhs: ContentHash) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}

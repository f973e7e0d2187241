/// The 16 random bytes that name a journal, kept across checkpoints.
package struct JournalID: Sendable, Hashable, CustomStringConvertible {
    /// The raw bytes (always 16).
    package let bytes: [UInt8]

    /// Wraps 16 bytes; returns `nil` for any other count.
    package init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// A new random id.
    package static func random() -> JournalID {
        var generator = SystemRandomNumberGenerator()
        return JournalID(bytes: (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })!
    }

    /// Lowercase hex in UUID grouping, e.g. `0b6f…-…`.
    package var description: String {
        let hex = bytes.map { byte -> String in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }
}

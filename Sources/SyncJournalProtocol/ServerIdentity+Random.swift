/// New identities for new databases.
extension ServerIdentity {
    /// A new identity: 128 random bits written as a UUID (version 4, lower
    /// case), from the platform's random source unless `generator` is given
    /// (a seeded one makes a simulation repeat).
    ///
    /// ```swift
    /// let identity = ServerIdentity.random()   // say "3f1c9a0e-8d2b-4e57-a1c4-5b9e0f7d2a61"
    /// ```
    public static func random() -> ServerIdentity {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A new identity from `generator` (see ``random()``).
    ///
    /// ```swift
    /// var generator = SystemRandomNumberGenerator()
    /// let identity = ServerIdentity.random(using: &generator)
    /// ```
    package static func random<Generator: RandomNumberGenerator>(using generator: inout Generator) -> ServerIdentity {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40   // version 4: random
        bytes[8] = (bytes[8] & 0x3F) | 0x80   // the RFC 4122 variant
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        // Hex digits and dashes are always a valid identity.
        return ServerIdentity(String(decoding: text, as: UTF8.self))!
    }
}

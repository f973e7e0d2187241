import SyncJournalCore
import Testing

/// SHA-256 against the standard's examples, against digests another
/// implementation gave for every length across the padding boundaries, and
/// fed in pieces split at every point.
@Suite("SHA-256")
struct SHA256Tests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format2: $0) }.joined() }

    @Test("the standard's examples: empty, abc, the two-block messages and a million a's")
    func knownAnswers() {
        let cases: [(String, String)] = [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
            ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
             "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
        ]
        for (message, digest) in cases { #expect(Self.hex(SHA256.digest(Array(message.utf8))) == digest, "\(message)") }
        var million = SHA256()
        let thousand = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000)
        for _ in 0..<1_000 { million.update(thousand) }
        #expect(Self.hex(million.finish()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("every length from 0 to 300 bytes, across every padding boundary, matches another implementation's digests")
    func everyLength() {
        // The digest of the 301 digests (lengths 0...300, byte i = 7i+3), as Python's hashlib gives it.
        var all = SHA256()
        for length in 0...300 { all.update(SHA256.digest((0..<length).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) })) }
        #expect(Self.hex(all.finish()) == "7d917fbd2cf49ddff9ad0a8706bba32d204e92e71d2e369c5a03d6af29278c9f")
    }

    @Test("fed in two pieces split at every point, or byte by byte, the digest is the one of the whole")
    func everySplit() {
        let message = (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 17) }
        let whole = SHA256.digest(message)
        for split in 0...message.count {
            var hash = SHA256()
            hash.update(message[..<split])
            hash.update(message[split...])
            #expect(hash.finish() == whole, "split at \(split)")
        }
        var bytewise = SHA256()
        for byte in message { bytewise.update([byte]) }
        #expect(bytewise.finish() == whole)
    }
}

extension String {
    /// Two lowercase hex digits.
    fileprivate init(format2 byte: UInt8) {
        let digits = Array("0123456789abcdef")
        self = String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }
}

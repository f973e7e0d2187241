import SyncJournalCore
import Testing

@Suite("String decoding (ByteReader.readString)")
struct StringDecodingTests {
    /// Byte strings biased toward the edges of UTF-8: lead bytes of every
    /// length, lone and extra continuation bytes, overlong forms, surrogates,
    /// code points past U+10FFFF, and sequences cut short.
    private static func trickyBytes(_ random: inout SeededGenerator) -> [UInt8] {
        let pieces: [[UInt8]] = [
            [0x41], [0x00], [0x7F], [0xC2, 0xA9], [0xC0, 0x80], [0xC1, 0xBF], [0xE2, 0x82, 0xAC], [0xE0, 0x80, 0x80],
            [0xED, 0xA0, 0x80], [0xEF, 0xBF, 0xBD], [0xF0, 0x9F, 0x98, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80],
            [0x80], [0xBF], [0xC2], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xFF], [0xFE], [0xE2, 0x84, 0xAA],
        ]
        let count = Int.random(in: 0...6, using: &random)
        var bytes: [UInt8] = []
        for _ in 0..<count {
            if Bool.random(using: &random) {
                bytes += pieces[Int.random(in: 0..<pieces.count, using: &random)]
            } else {
                bytes.append(UInt8.random(in: 0...255, using: &random))
            }
        }
        return bytes
    }

    @Test("a string is accepted exactly when String(validating:as:) accepts its bytes, and keeps them byte for byte")
    // The reference it compares against, String(validating:as:), is newer than the package's minimum.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func readStringAgreesWithStandardValidation() {
        var random = SeededGenerator(seed: 11)
        for _ in 0..<20_000 {
            let bytes = Self.trickyBytes(&random)
            var writer = ByteWriter()
            writer.writeBytes(bytes)
            var reader = ByteReader(writer.bytes)
            let expected = String(validating: bytes, as: UTF8.self)
            do {
                let string = try reader.readString()
                #expect(expected != nil, "accepted invalid UTF-8 \(bytes)")
                #expect(Array(string.utf8) == bytes)
                #expect(reader.isAtEnd)
            } catch {
                #expect(expected == nil, "refused valid UTF-8 \(bytes)")
                #expect(error == .invalidUTF8(at: 0))
            }
        }
    }
}

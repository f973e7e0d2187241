import Foundation
import SyncJournalCore
import SyncJournalTesting
import Testing

@Suite("CRC-32C")
struct CRC32CTests {
    @Test("CRC-32C of \"123456789\" is 0xE3069283 on both the hardware and the software path")
    func checkValueOfTheStandardString() {
        let bytes = Array("123456789".utf8)
        #expect(CRC32C.checksum(bytes) == 0xE306_9283)
        #expect(CRC32C.softwareChecksum(bytes) == 0xE306_9283)
    }

    /// RFC 3720 (iSCSI) B.4 and the standard check string.
    static let knownVectors: [(bytes: [UInt8], checksum: UInt32)] = [
        ([UInt8](repeating: 0x00, count: 32), 0x8A91_36AA),
        ([UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43),
        ((0..<32).map { UInt8($0) }, 0x46DD_794E),
        ((0..<32).map { UInt8(31 - $0) }, 0x113F_DB5C),
        (Array("123456789".utf8), 0xE306_9283),
        ([], 0),
    ]

    @Test("CRC-32C matches the RFC 3720 (iSCSI) test vectors on the software path, on the hardware path, and through checksum()")
    func rfc3720Vectors() {
        for (bytes, expected) in Self.knownVectors {
            #expect(CRC32C.checksum(bytes) == expected)
            #expect(CRC32C.softwareChecksum(bytes) == expected)
            if CRC32C.hardwarePresent {
                #expect(CRC32C.hardwareChecksum(bytes) == expected)
            } else {
                #expect(CRC32C.hardwareChecksum(bytes) == nil)
            }
        }
    }

    @Test("The instruction is in use exactly when the CPU has it and SYNCJOURNAL_CRC32C does not ask for software")
    func softwarePathCanBeForced() {
        let setting = ProcessInfo.processInfo.environment["SYNCJOURNAL_CRC32C"]
        print("CRC32C.hardwarePresent = \(CRC32C.hardwarePresent), usesHardware = \(CRC32C.usesHardware), SYNCJOURNAL_CRC32C = \(setting ?? "unset")")
        #expect(CRC32C.usesHardware == (CRC32C.hardwarePresent && setting != "software"))
        #expect(CRC32C.softwareRequested(by: "software"))
        #expect(!CRC32C.softwareRequested(by: "hardware"))
        #expect(!CRC32C.softwareRequested(by: ""))
        #expect(!CRC32C.softwareRequested(by: nil))
    }

    @Test("The checksum of two pieces combines from theirs, and the checksum of any range follows from the running checksums at its ends")
    func combineAndRangeMatchDirectChecksums() {
        // Fixed, irregular bytes: a multiplicative hash of the index.
        let bytes = (0..<5000).map { UInt8(truncatingIfNeeded: (UInt32($0) &* 2_654_435_761) >> 13) }
        for (a, b) in [(0, 0), (0, 5000), (1, 2), (17, 4099), (4000, 5000), (2500, 2500)] {
            let before = CRC32C.checksum(bytes[..<a])
            let through = CRC32C.checksum(bytes[..<b])
            let piece = CRC32C.checksum(bytes[a..<b])
            #expect(CRC32C.combine(before, piece, secondLength: b - a) == through)
            #expect(CRC32C.range(start: before, end: through, length: b - a) == piece)
        }
    }

    @Test("The hardware checksum equals the software checksum on random buffers, unaligned slices and split updates")
    func hardwareMatchesSoftware() {
        // On a CPU without the instruction only checksum() and the software
        // path are compared; this machine's answer is recorded so a reader of
        // the log knows.
        print("CRC32C.hardwarePresent = \(CRC32C.hardwarePresent), usesHardware = \(CRC32C.usesHardware)")
        var random = SeededGenerator(seed: 0xC0FFEE)
        for round in 0..<600 {
            let count = round < 64 ? round : Int.random(in: 0...5000, using: &random)
            let bytes = random.bytes(count)
            let expected = CRC32C.softwareChecksum(bytes)
            #expect(CRC32C.checksum(bytes) == expected, "length \(count)")
            if CRC32C.hardwarePresent {
                #expect(CRC32C.hardwareChecksum(bytes) == expected, "length \(count)")
            }

            // Unaligned start and end: a slice of a larger buffer.
            let start = count == 0 ? 0 : Int.random(in: 0..<min(count, 16), using: &random)
            let end = count == 0 ? 0 : Int.random(in: start...count, using: &random)
            let slice = Array(bytes[start..<end])
            let sliceChecksum = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
            #expect(sliceChecksum == CRC32C.softwareChecksum(slice), "slice \(start)..<\(end) of \(count)")
            if CRC32C.hardwarePresent {
                let hardwareSlice = bytes.withUnsafeBytes { CRC32C.hardwareChecksum(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
                let softwareSlice = bytes.withUnsafeBytes { CRC32C.softwareChecksum(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
                #expect(hardwareSlice == softwareSlice, "slice \(start)..<\(end) of \(count)")
            }

            // The same bytes fed in two pieces.
            let cut = count == 0 ? 0 : Int.random(in: 0...count, using: &random)
            var running = CRC32C.Running()
            running.update(bytes[..<cut])
            running.update(bytes[cut...])
            #expect(running.value == expected, "split at \(cut) of \(count)")
        }
    }

    @Test("unmask(mask(c)) == c, and the mask is LevelDB's rotate-and-add")
    func maskRoundTrip() {
        var random = SeededGenerator(seed: 42)
        let edges: [UInt32] = [0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xE306_9283, 0xA282_EAD8]
        for value in edges + (0..<10_000).map({ _ in UInt32.random(in: .min ... .max, using: &random) }) {
            #expect(CRC32C.unmask(CRC32C.mask(value)) == value)
            #expect(CRC32C.mask(value) == ((value >> 15) | (value << 17)) &+ 0xA282_EAD8)
        }
        #expect(CRC32C.mask(0) == 0xA282_EAD8)
        #expect(CRC32C.mask(0xE306_9283) != 0xE306_9283)
    }

    @Test("Flipping any one bit of a buffer changes its checksum by a value that singleBitError locates exactly, and two flips are not taken for one")
    func singleBitErrorLocatesEveryBit() {
        var random = SeededGenerator(seed: 31)
        for length in [1, 2, 7, 36, 333] {
            let original = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let crc = CRC32C.checksum(original)
            for byte in 0..<length {
                for bit in 0..<8 {
                    var flipped = original
                    flipped[byte] ^= UInt8(1) << UInt8(bit)
                    let found = CRC32C.singleBitError(syndrome: CRC32C.checksum(flipped) ^ crc, length: length)
                    #expect(found?.byte == byte && found?.bit == bit, "length \(length), byte \(byte), bit \(bit)")
                }
            }
            if length > 1 {
                var twice = original
                twice[0] ^= 1
                twice[length - 1] ^= 0x80
                #expect(CRC32C.singleBitError(syndrome: CRC32C.checksum(twice) ^ crc, length: length) == nil)
            }
        }
    }
}

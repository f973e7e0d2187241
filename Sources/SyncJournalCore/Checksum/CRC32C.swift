import CSyncJournalCRC

/// CRC-32C (Castagnoli), the checksum of every journal header and record.
///
/// Uses the CPU's CRC-32C instruction when it has one (checked once at run
/// time: SSE4.2 on x86-64, the ARMv8 CRC extension on arm64 Linux and Apple
/// systems) and a table-driven Swift implementation otherwise. Both give the
/// same result; tests compare them on known vectors and random input. Setting
/// `SYNCJOURNAL_CRC32C=software` in the environment makes every checksum take
/// the Swift path, on any CPU.
///
/// ```swift
/// let c = CRC32C.checksum(Array("123456789".utf8))   // 0xE3069283
/// let stored = CRC32C.mask(c)                        // what the journal keeps
/// ```
package enum CRC32C {
    /// Whether the hardware instruction is in use on this machine: the CPU
    /// has it and `SYNCJOURNAL_CRC32C` is not `software`.
    package static let usesHardware: Bool = sj_crc32c_hw_available() != 0

    /// Whether this CPU has the instruction, in use or not.
    package static let hardwarePresent: Bool = sj_crc32c_hw_present() != 0

    /// Whether `setting`, a value of `SYNCJOURNAL_CRC32C` (`nil` when it is
    /// not set), turns the instruction off.
    package static func softwareRequested(by setting: String?) -> Bool {
        guard let setting else { return sj_crc32c_software_requested(nil) != 0 }
        return setting.withCString { sj_crc32c_software_requested($0) != 0 }
    }

    /// The CRC-32C of `bytes`.
    @inlinable
    package static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var state = Running()
        state.update(bytes)
        return state.value
    }

    /// The CRC-32C of a raw buffer.
    package static func checksum(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
        var state = Running()
        state.update(buffer)
        return state.value
    }

    /// A checksum computed in several pieces.
    package struct Running: Sendable {
        @usableFromInline var register: UInt32 = 0xFFFF_FFFF

        /// Starts a new checksum.
        @inlinable package init() {}

        /// Adds `bytes` to the checksum.
        @inlinable
        package mutating func update(_ bytes: some Sequence<UInt8>) {
            let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
                update(UnsafeRawBufferPointer(buffer))
            }
            if done == nil {
                let copy = Array(bytes)
                copy.withUnsafeBytes { update($0) }
            }
        }

        /// Adds the bytes of `buffer` to the checksum.
        @inlinable
        package mutating func update(_ buffer: UnsafeRawBufferPointer) {
            register = CRC32C.advance(register, buffer)
        }

        /// The checksum of everything added so far.
        @inlinable package var value: UInt32 { ~register }
    }

    @usableFromInline
    static func advance(_ register: UInt32, _ buffer: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return register }
        if usesHardware {
            return sj_crc32c_hw_update(register, base, buffer.count)
        }
        return softwareAdvance(register, buffer)
    }

    /// The portable implementation (slicing by 8), also used to check the
    /// hardware path in tests.
    package static func softwareChecksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { softwareChecksum($0) }
    }

    /// The CRC-32C of a raw buffer, computed by the portable implementation.
    package static func softwareChecksum(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
        ~softwareAdvance(0xFFFF_FFFF, buffer)
    }

    /// The CRC-32C of `bytes` computed with the CPU's instruction whether or
    /// not checksums use it; `nil` when the CPU has none. For tests that
    /// compare the two paths.
    package static func hardwareChecksum(_ bytes: [UInt8]) -> UInt32? {
        bytes.withUnsafeBytes { hardwareChecksum($0) }
    }

    /// The CRC-32C of a raw buffer computed with the CPU's instruction;
    /// `nil` when the CPU has none.
    package static func hardwareChecksum(_ buffer: UnsafeRawBufferPointer) -> UInt32? {
        guard hardwarePresent else { return nil }
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return ~sj_crc32c_hw_update(0xFFFF_FFFF, base, buffer.count)
    }

    static func softwareAdvance(_ register: UInt32, _ buffer: UnsafeRawBufferPointer) -> UInt32 {
        var crc = register
        var index = 0
        let count = buffer.count
        let t = tables
        while count - index >= 8 {
            let low = crc ^ (UInt32(buffer[index]) | UInt32(buffer[index + 1]) << 8
                | UInt32(buffer[index + 2]) << 16 | UInt32(buffer[index + 3]) << 24)
            crc = t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                ^ t[3 * 256 + Int(buffer[index + 4])] ^ t[2 * 256 + Int(buffer[index + 5])]
                ^ t[1 * 256 + Int(buffer[index + 6])] ^ t[Int(buffer[index + 7])]
            index += 8
        }
        while index < count {
            crc = t[Int((crc ^ UInt32(buffer[index])) & 0xFF)] ^ (crc >> 8)
            index += 1
        }
        return crc
    }

    /// Eight 256-entry tables for slicing-by-8 over the reflected polynomial.
    private static let tables: [UInt32] = {
        let polynomial: UInt32 = 0x82F6_3B78
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ polynomial : c >> 1 }
            table[i] = c
        }
        for slice in 1..<8 {
            for i in 0..<256 {
                let previous = table[(slice - 1) * 256 + i]
                table[slice * 256 + i] = table[Int(previous & 0xFF)] ^ (previous >> 8)
            }
        }
        return table
    }()

    /// Where a single flipped bit would explain a checksum mismatch.
    ///
    /// `syndrome` is the computed CRC-32C of `length` bytes XOR the one
    /// that was expected. CRC-32C is affine in its input, so one flipped bit
    /// at byte `k`, bit `b` always changes the checksum by the same value,
    /// whatever the other bytes are; this walks those values from the last
    /// byte to the first (eight one-byte steps per byte). Returns the byte
    /// index and bit (0 = least significant) of the one bit whose flip gives
    /// `syndrome`, or `nil` when no single bit does. Within CRC-32C's period
    /// no two bit positions share a value, so the answer is unique.
    package static func singleBitError(syndrome: UInt32, length: Int) -> (byte: Int, bit: Int)? {
        guard syndrome != 0, length > 0 else { return nil }
        let t = tables
        var values = (0..<8).map { t[1 << $0] }
        var byte = length - 1
        while byte >= 0 {
            for bit in 0..<8 where values[bit] == syndrome { return (byte, bit) }
            for bit in 0..<8 { values[bit] = t[Int(values[bit] & 0xFF)] ^ (values[bit] >> 8) }
            byte -= 1
        }
        return nil
    }

    /// How flipping each bit at `positions` (byte indexes into a message of
    /// `length` bytes) changes the message's CRC-32C: eight values per
    /// position, bit 0 first. CRC-32C is affine, so the change does not
    /// depend on the other bytes. Costs one step per byte from the earliest
    /// position to the end.
    package static func bitSyndromes(length: Int, positions: [Int]) -> [[UInt32]] {
        guard let earliest = positions.min() else { return [] }
        let t = tables
        var values = (0..<8).map { t[1 << $0] }
        var byAt: [Int: [UInt32]] = [:]
        let wanted = Set(positions)
        var byte = length - 1
        while byte >= earliest {
            if wanted.contains(byte) { byAt[byte] = values }
            for bit in 0..<8 { values[bit] = t[Int(values[bit] & 0xFF)] ^ (values[bit] >> 8) }
            byte -= 1
        }
        return positions.map { byAt[$0] ?? [] }
    }

    /// Whether `target` is a sum (exclusive or) of some of `vectors`: can
    /// flipping some of the bits whose changes they are turn one checksum
    /// into another? Gaussian elimination over 32-bit vectors.
    package static func spans(_ target: UInt32, with vectors: [UInt32]) -> Bool {
        var basis = [UInt32](repeating: 0, count: 32)
        for vector in vectors {
            var x = vector
            var bit = 31
            while x != 0 && bit >= 0 {
                if (x >> UInt32(bit)) & 1 == 1 {
                    if basis[bit] == 0 { basis[bit] = x; break }
                    x ^= basis[bit]
                }
                bit -= 1
            }
        }
        var x = target
        var bit = 31
        while x != 0 && bit >= 0 {
            if (x >> UInt32(bit)) & 1 == 1 {
                if basis[bit] == 0 { return false }
                x ^= basis[bit]
            }
            bit -= 1
        }
        return x == 0
    }

    /// The CRC-32C of `first ‖ second` from the CRC-32C of each and the
    /// length of `second`, without the bytes (zlib's `crc32_combine`).
    package static func combine(_ first: UInt32, _ second: UInt32, secondLength: Int) -> UInt32 {
        multiply(powerOfX(bytes: secondLength), first) ^ second
    }

    /// The CRC-32C of bytes `[a, b)` of a stream, from `start`, the
    /// CRC-32C of the stream's bytes before `a`, `end`, that of the bytes
    /// before `b`, and `length = b - a`. CRC-32C is affine in its input, so
    /// one pass over a file gives the checksum of every range in it.
    package static func range(start: UInt32, end: UInt32, length: Int) -> UInt32 {
        multiply(powerOfX(bytes: length), start) ^ end
    }

    /// The reflected polynomial.
    private static let polynomial: UInt32 = 0x82F6_3B78

    /// `x^(2^k)` modulo the polynomial, for every k that a byte count's bits need.
    private static let powersOfTwo: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 67)
        var p: UInt32 = 1 << 30  // x^1 in the reflected representation
        for k in 0..<67 {
            table[k] = p
            p = multiply(p, p)
        }
        return table
    }()

    /// `a · b` modulo the polynomial, both reflected.
    private static func multiply(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var product: UInt32 = 0
        var b = b
        var mask: UInt32 = 1 << 31
        for _ in 0..<32 {
            if a & mask != 0 { product ^= b }
            mask >>= 1
            b = b & 1 != 0 ? (b >> 1) ^ polynomial : b >> 1
        }
        return product
    }

    /// `x^(8 · bytes)` modulo the polynomial: the operator that moves a CRC
    /// register over `bytes` zero bytes.
    private static func powerOfX(bytes: Int) -> UInt32 {
        var p: UInt32 = 1 << 31  // x^0
        var n = UInt64(bytes)
        var k = 3
        while n != 0 {
            if n & 1 != 0 { p = multiply(powersOfTwo[k], p) }
            n >>= 1
            k += 1
        }
        return p
    }

    /// Masks a checksum before it is stored, so that a CRC computed over bytes
    /// that contain stored CRCs is not trivially valid (LevelDB's rule).
    @inlinable
    package static func mask(_ crc: UInt32) -> UInt32 {
        ((crc >> 15) | (crc << 17)) &+ 0xA282_EAD8
    }

    /// Reverses ``mask(_:)``.
    @inlinable
    package static func unmask(_ masked: UInt32) -> UInt32 {
        let rotated = masked &- 0xA282_EAD8
        return (rotated >> 17) | (rotated << 15)
    }
}

import CSyncJournalCRC

/// CRC-32C (Castagnoli), the checksum of every journal header and record.
///
/// Uses the CPU's CRC-32C instruction when it has one (checked once at run
/// time) and a table-driven Swift implementation otherwise. Both give the same
/// result; tests compare them on random input.
///
/// ```swift
/// let c = CRC32C.checksum(Array("123456789".utf8))   // 0xE3069283
/// let stored = CRC32C.mask(c)                        // what the journal keeps
/// ```
package enum CRC32C {
    /// Whether the hardware instruction is in use on this machine.
    package static let usesHardware: Bool = sj_crc32c_hw_available() != 0

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
        bytes.withUnsafeBytes { ~softwareAdvance(0xFFFF_FFFF, $0) }
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

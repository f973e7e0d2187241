import CSyncJournalSHA256

/// SHA-256 (FIPS 180-4), the name of an attachment's content: two files
/// with the same bytes have the same digest, and a chunk that arrives
/// damaged cannot pass for the content it claims to be.
///
/// Incremental: feed the bytes in pieces of any size, in order, then take
/// the digest once. Written here in Swift because Foundation on Linux has
/// no hash, and the package takes no dependencies. On a CPU with SHA
/// instructions (x86-64 SHA extensions) the blocks go through them;
/// `SYNCJOURNAL_SHA256=software` in the environment forces the Swift code.
///
/// ```swift
/// var hash = SHA256()
/// hash.update(Array("abc".utf8))
/// let digest = hash.finish()   // ba7816bf 8f01cfea …
/// ```
package struct SHA256: Sendable {
    /// The digest's length in bytes.
    package static let digestLength = 32

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19)
    /// Bytes of an unfinished 64-byte block.
    private var pending: [UInt8] = []
    /// Bytes fed so far.
    private var length: UInt64 = 0

    /// Whether blocks go through the CPU's SHA instructions: the CPU has
    /// them and `SYNCJOURNAL_SHA256` is not `software`.
    package static let usesHardware: Bool = sj_sha256_hw_available() != 0

    /// A hash of no bytes yet.
    package init() { pending.reserveCapacity(64) }

    /// The digest of `bytes` in one call.
    package static func digest(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var hash = SHA256()
        hash.update(bytes)
        return hash.finish()
    }

    /// Feeds the next bytes.
    package mutating func update(_ bytes: some Collection<UInt8>) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { buffer in update(UnsafeRawBufferPointer(buffer)) }
        if handled == nil { Array(bytes).withUnsafeBytes { update($0) } }
    }

    /// Feeds the next bytes from raw memory.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        length &+= UInt64(bytes.count)
        var start = 0
        if !pending.isEmpty {
            let taken = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<taken])
            start = taken
            guard pending.count == 64 else { return }
            pending.withUnsafeBytes { compress($0) }
            pending.removeAll(keepingCapacity: true)
        }
        let blocks = (bytes.count - start) / 64
        if blocks > 0 {
            if Self.usesHardware {
                withUnsafeMutablePointer(to: &state) { words in
                    words.withMemoryRebound(to: UInt32.self, capacity: 8) { sj_sha256_hw_blocks($0, bytes.baseAddress! + start, blocks) }
                }
            } else {
                for block in 0..<blocks {
                    let at = start + block * 64
                    softwareCompress(UnsafeRawBufferPointer(rebasing: bytes[at..<(at + 64)]))
                }
            }
            start += blocks * 64
        }
        if start < bytes.count { pending.append(contentsOf: bytes[start...]) }
    }

    /// The digest of everything fed: 32 bytes. The hash is spent after.
    package mutating func finish() -> [UInt8] {
        let bits = length &* 8
        var tail = pending
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        tail.withUnsafeBytes { block in
            var offset = 0
            while offset < block.count {
                compress(UnsafeRawBufferPointer(rebasing: block[offset..<(offset + 64)]))
                offset += 64
            }
        }
        pending.removeAll()
        let words = [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7]
        return words.flatMap { word in [UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word)] }
    }

    /// The round constants: the first 32 bits of the fractional parts of
    /// the cube roots of the first 64 primes.
    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    @inline(__always)
    private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 { (value >> count) | (value << (32 - count)) }

    /// One 64-byte block into the state.
    private mutating func compress(_ block: UnsafeRawBufferPointer) {
        guard Self.usesHardware else { return softwareCompress(block) }
        withUnsafeMutablePointer(to: &state) { words in
            words.withMemoryRebound(to: UInt32.self, capacity: 8) { sj_sha256_hw_blocks($0, block.baseAddress!, 1) }
        }
    }

    /// One 64-byte block into the state, in Swift.
    private mutating func softwareCompress(_ block: UnsafeRawBufferPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
            for index in 0..<16 {
                let at = index * 4
                schedule[index] = UInt32(block[at]) << 24 | UInt32(block[at + 1]) << 16 | UInt32(block[at + 2]) << 8 | UInt32(block[at + 3])
            }
            for index in 16..<64 {
                let early = schedule[index - 15], late = schedule[index - 2]
                let sigma0 = Self.rotate(early, 7) ^ Self.rotate(early, 18) ^ (early >> 3)
                let sigma1 = Self.rotate(late, 17) ^ Self.rotate(late, 19) ^ (late >> 10)
                schedule[index] = schedule[index - 16] &+ sigma0 &+ schedule[index - 7] &+ sigma1
            }
            var (a, b, c, d, e, f, g, h) = state
            Self.roundConstants.withUnsafeBufferPointer { constants in
                for index in 0..<64 {
                    let sum1 = Self.rotate(e, 6) ^ Self.rotate(e, 11) ^ Self.rotate(e, 25)
                    let choice = (e & f) ^ (~e & g)
                    let first = h &+ sum1 &+ choice &+ constants[index] &+ schedule[index]
                    let sum0 = Self.rotate(a, 2) ^ Self.rotate(a, 13) ^ Self.rotate(a, 22)
                    let majority = (a & b) ^ (a & c) ^ (b & c)
                    let second = sum0 &+ majority
                    h = g; g = f; f = e; e = d &+ first
                    d = c; c = b; b = a; a = first &+ second
                }
            }
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h)
        }
    }
}

/// Format 2's recovery rule (`journals/FORMAT.md`, section 3.2): is the
/// damage at the end of the valid prefix what an interrupted append leaves,
/// or did bytes change after they were durable?
///
/// An append writes past the durable end `D` only, onto zeros or past the
/// file's end, and every record it writes carries a horizon `h <= D`. A power
/// cut keeps any subset of those unsynced sectors, each whole. So after an
/// interrupted append, the first damaged record at `X` satisfies:
///
/// 1. no record header after it claims a horizon past `X` (such a record was
///    written once `X` was durable);
/// 2. no non-zero byte lies `inFlightLimit` or more past `X` (nothing was
///    ever written that far past the durable end);
/// 3. format 2.2: the file's size is a multiple of the sector size (any
///    other size is left only by a clean close or a synced cut, after which
///    every record was durable);
/// 4. if the record is complete, the bytes a writer put there are
///    consistent with it: every sector that holds a non-zero byte holds the
///    writer's bytes, so the header fields a writer fixes must be there, and
///    some choice of bytes for the sectors that read as zeros (unwritten)
///    must make the checksum match.
///
/// Damage that breaks any of these is corruption, reported and never cut.
extension JournalScanner {
    mutating func classifyFormat2(_ damage: JournalDamage, at offset: Int64, header: JournalHeader,
                                  expectedSequence: UInt64) throws(SystemError) -> JournalStatus {
        let frameHeaderLength = Int64(JournalFormat.recordHeaderLength)
        var searchFrom = offset + 1
        var verifiedHeader: RecordFrame.Header?
        switch damage {
        case .checksumMismatch, .incompletePayload:
            _ = try window.load(offset, JournalFormat.recordHeaderLength)
            let frame = window.withBytes(offset, JournalFormat.recordHeaderLength) { RecordFrame.Header($0, at: 0) }
            verifiedHeader = frame
            // The header verified, so its length is the writer's: frames
            // inside this record's payload are never taken for records.
            searchFrom = offset + frameHeaderLength + Int64(frame.length)
        default:
            break
        }

        var behind: (at: Int64, horizon: Int64)?
        try forEachVerifiedHeader(from: searchFrom, generation: header.generation) { at, frame in
            if frame.horizon > offset {
                behind = (at, frame.horizon)
                return false
            }
            return true
        }
        if let behind {
            return .corrupt(offset: offset, damage: .damageBehindHorizon(damage, recordAt: behind.at, horizon: behind.horizon))
        }

        let limit = Int64(header.inFlightLimit)
        if offset + limit < window.fileSize, let byte = try firstNonZeroByte(from: offset + limit) {
            return .corrupt(offset: offset, damage: .beyondInFlightLimit(damage, byteOffset: byte, limit: header.inFlightLimit))
        }

        if let closed = closedEndDamage(damage, header: header) { return .corrupt(offset: offset, damage: closed) }

        switch damage {
        case .recordHeaderChecksumMismatch:
            if let corruption = try examineDamagedHeader(damage, at: offset, header: header, expectedSequence: expectedSequence) {
                return .corrupt(offset: offset, damage: corruption)
            }
        case .checksumMismatch:
            let payloadStart = offset + frameHeaderLength
            let payloadEnd = payloadStart + Int64(verifiedHeader?.length ?? 0)
            if let corruption = try examineDamagedPayload(damage, span: payloadStart..<payloadEnd, checksumAt: offset + 4) {
                return .corrupt(offset: offset, damage: corruption)
            }
        default:
            // The file ends inside the record: its end had not reached the disk.
            break
        }
        return .tornTail(offset: offset, damage: damage)
    }

    /// Format 2.2: a size that is not a multiple of the sector size was left
    /// by a clean close or a synced cut (a preallocation step only ever sets
    /// multiples of it, and appends never write past it), so whatever does
    /// not verify changed after it was durable.
    func closedEndDamage(_ damage: JournalDamage, header: JournalHeader) -> JournalDamage? {
        guard header.keepsClosedEnd, window.fileSize % Int64(JournalFormat.sectorSize) != 0 else { return nil }
        return .damageInClosedJournal(damage, fileSize: window.fileSize)
    }

    /// The ranges of `span`, split at sector boundaries, that read as all
    /// zeros and so may never have been written. A piece in a sector that
    /// also holds a non-zero byte of the record's verified header
    /// (`knownWritten` is where that header ends) reached the disk with it.
    private mutating func unwrittenPieces(of span: Range<Int64>, knownWritten: Int64?) throws(SystemError) -> [Range<Int64>] {
        let sector = Int64(JournalFormat.sectorSize)
        var pieces: [Range<Int64>] = []
        var start = span.lowerBound
        while start < span.upperBound {
            let sectorStart = start / sector * sector
            let end = min(span.upperBound, sectorStart + sector)
            // Header bytes that are all zero prove nothing: they equal the old bytes.
            var holdsVerifiedBytes = false
            if let knownWritten, sectorStart < knownWritten {
                let headerPart = max(sectorStart, knownWritten - Int64(JournalFormat.recordHeaderLength))..<knownWritten
                holdsVerifiedBytes = try firstNonZeroByte(in: headerPart) != nil
            }
            if !holdsVerifiedBytes, try firstNonZeroByte(in: start..<end) == nil { pieces.append(start..<end) }
            start = end
        }
        return pieces
    }

    /// The CRC-32C of `range` of the file.
    private mutating func checksum(of range: Range<Int64>) throws(SystemError) -> UInt32 {
        var running = CRC32C.Running()
        var at = range.lowerBound
        while at < range.upperBound {
            let count = try window.load(at, Int(min(Int64(FileWindow.chunk), range.upperBound - at)))
            if count == 0 { break }
            window.withBytes(at, count) { running.update($0) }
            at += Int64(count)
        }
        return running.value
    }

    /// A verified header's payload fails its checksum. An interrupted append
    /// explains it exactly when bytes in the payload's all-zero pieces
    /// could make it match: always once such a piece holds four bytes or
    /// more (any 32 consecutive bits can give CRC-32C any value), and for
    /// smaller pieces when the change their bits can make spans the
    /// difference. A zero piece beside a flipped bit is therefore a tear:
    /// the piece's unknown bytes could have been anything, so a single bit
    /// that would make the checksum match proves nothing.
    private mutating func examineDamagedPayload(_ damage: JournalDamage, span: Range<Int64>,
                                                checksumAt: Int64) throws(SystemError) -> JournalDamage? {
        let pieces = try unwrittenPieces(of: span, knownWritten: span.lowerBound)
        _ = try window.load(checksumAt, 4)
        let stored = window.withBytes(checksumAt, 4) { RecordFrame.load($0, 0, UInt32.self) }
        let difference = try checksum(of: span) ^ CRC32C.unmask(stored)
        if pieces.contains(where: { $0.count >= 4 }) { return nil }
        if !pieces.isEmpty {
            let positions = pieces.flatMap { $0 }.map { Int($0 - span.lowerBound) }
            let vectors = CRC32C.bitSyndromes(length: span.count, positions: positions).flatMap { $0 }
            if CRC32C.spans(difference, with: vectors) { return nil }
            return .damagedCompleteRecord(damage)
        }
        return singleFlip(damage, difference: difference, covered: span, computed: CRC32C.unmask(stored) ^ difference,
                          stored: stored, checksumAt: checksumAt) ?? .damagedCompleteRecord(damage)
    }

    /// Names the bit when one flip explains the mismatch of a record with no
    /// unwritten piece (a clearer report; the record is corrupt either way).
    private func singleFlip(_ damage: JournalDamage, difference: UInt32, covered: Range<Int64>, computed: UInt32,
                            stored: UInt32, checksumAt: Int64) -> JournalDamage? {
        if let flip = CRC32C.singleBitError(syndrome: difference, length: covered.count) {
            return .flippedBit(damage, byteOffset: covered.lowerBound + Int64(flip.byte), bit: flip.bit)
        }
        for bit in 0..<32 where CRC32C.mask(computed) == stored ^ (1 << UInt32(bit)) {
            return .flippedBit(damage, byteOffset: checksumAt + Int64(bit / 8), bit: bit % 8)
        }
        return nil
    }

    /// What a writer puts in each byte of the record header at `offset`:
    /// a mask of the bits it fixes and their values, and the field's name.
    /// The generation and sequence are known, reserved bits are zero, the
    /// length is at most 16 MiB, and the horizon no greater than the offset.
    static func fixedHeaderBits(at offset: Int64, generation: UInt64, sequence: UInt64) -> [(mask: UInt8, value: UInt8, field: String)] {
        var bits = [(mask: UInt8, value: UInt8, field: String)](repeating: (0, 0, ""), count: JournalFormat.recordHeaderLength)
        bits[11] = (0xFE, 0, "length")
        bits[14] = (0xFF, 0, "reserved field")
        bits[15] = (0xFF, 0, "reserved field")
        for i in 0..<8 {
            bits[16 + i] = (0xFF, UInt8(truncatingIfNeeded: generation >> UInt64(8 * i)), "generation")
            bits[24 + i] = (0xFF, UInt8(truncatingIfNeeded: sequence >> UInt64(8 * i)), "sequence number")
        }
        let width = 64 - UInt64(offset).leadingZeroBitCount
        for bit in width..<64 {
            bits[32 + bit / 8].mask |= 1 << UInt8(bit % 8)
            bits[32 + bit / 8].field = "sync horizon"
        }
        return bits
    }

    /// A complete record header fails its checksum. Every sector holding a
    /// non-zero byte of it was written, so the fields a writer fixes must
    /// read as written there; and the header's all-zero piece (a header
    /// spans at most two sectors) must be able to make the checksum match
    /// with the bits a writer does not fix. A zero piece whose bytes a
    /// writer fixes to zero anyway (the high bytes of a horizon) explains
    /// nothing.
    private mutating func examineDamagedHeader(_ damage: JournalDamage, at offset: Int64, header: JournalHeader,
                                               expectedSequence: UInt64) throws(SystemError) -> JournalDamage? {
        let length = JournalFormat.recordHeaderLength
        let span = offset..<(offset + Int64(length))
        let pieces = try unwrittenPieces(of: span, knownWritten: nil)
        _ = try window.load(offset, length)
        var bytes = window.withBytes(offset, length) { Array($0) }
        let fixed = Self.fixedHeaderBits(at: offset, generation: header.generation, sequence: expectedSequence)
        let unwritten = Set(pieces.flatMap { $0 }.map { Int($0 - offset) })
        for index in 0..<length where !unwritten.contains(index) && (bytes[index] ^ fixed[index].value) & fixed[index].mask != 0 {
            return .alteredHeaderField(damage, field: fixed[index].field, byteOffset: offset + Int64(index))
        }
        let stored = bytes.withUnsafeBytes { RecordFrame.load($0, 0, UInt32.self) }
        if unwritten.isEmpty {
            let computed = CRC32C.checksum(bytes[4...])
            return singleFlip(damage, difference: computed ^ CRC32C.unmask(stored), covered: (offset + 4)..<span.upperBound,
                              computed: computed, stored: stored, checksumAt: offset) ?? .damagedCompleteRecord(damage)
        }
        // The fixed bits of an unwritten piece take the writer's values.
        for index in unwritten { bytes[index] = fixed[index].value }
        if unwritten.contains(0) {
            // The piece is a prefix: from the checksum field on.
            let written = (0..<4).filter { !unwritten.contains($0) }
            if written.isEmpty { return nil }
            // Only the checksum's first bytes are unknown; the rest of the header was written.
            var computed: [UInt8] = []
            var masked = CRC32C.mask(CRC32C.checksum(bytes[4...]))
            for _ in 0..<4 { computed.append(UInt8(masked & 0xFF)); masked >>= 8 }
            return written.allSatisfy({ computed[$0] == bytes[$0] }) ? nil : .damagedCompleteRecord(damage)
        }
        let covered = Array(bytes[4...])
        let difference = CRC32C.checksum(covered) ^ CRC32C.unmask(stored)
        let positions = unwritten.sorted()
        let syndromes = CRC32C.bitSyndromes(length: covered.count, positions: positions.map { $0 - 4 })
        var vectors: [UInt32] = []
        for (index, perBit) in zip(positions, syndromes) {
            for bit in 0..<8 where fixed[index].mask & (1 << UInt8(bit)) == 0 { vectors.append(perBit[bit]) }
        }
        return CRC32C.spans(difference, with: vectors) ? nil : .damagedCompleteRecord(damage)
    }

    /// The last non-zero byte within `range`, if any.
    private mutating func lastNonZeroByte(in range: Range<Int64>) throws(SystemError) -> Int64? {
        var end = range.upperBound
        while end > range.lowerBound {
            let start = max(range.lowerBound, end - Int64(FileWindow.chunk))
            let count = try window.load(start, Int(end - start))
            if count == 0 { break }
            let index = window.withBytes(start, count) { raw in raw.lastIndex { $0 != 0 } }
            if let index { return start + Int64(index) }
            end = start
        }
        return nil
    }

    /// The first non-zero byte within `range`, if any.
    private mutating func firstNonZeroByte(in range: Range<Int64>) throws(SystemError) -> Int64? {
        var at = range.lowerBound
        while at < range.upperBound {
            let count = try window.load(at, Int(min(Int64(FileWindow.chunk), range.upperBound - at)))
            if count == 0 { break }
            let index = window.withBytes(at, count) { raw in raw.firstIndex { $0 != 0 } }
            if let index { return at + Int64(index) }
            at += Int64(count)
        }
        return nil
    }

    /// Calls `body` with each offset from `start` on where a format-2 record
    /// header of `generation` verifies, stepping over the record it starts
    /// (so frames inside a payload are never seen) until `body` returns
    /// `false`. Each offset costs an 8-byte comparison, and a 36-byte
    /// checksum only when the generation matches: linear in the bytes
    /// searched, whatever they hold.
    mutating func forEachVerifiedHeader(from start: Int64, generation: UInt64,
                                        _ body: (Int64, RecordFrame.Header) throws(SystemError) -> Bool) throws(SystemError) {
        let headerLength = JournalFormat.recordHeaderLength
        var at = start
        while at + Int64(headerLength) <= window.fileSize {
            let loaded = try window.load(at, Int(min(Int64(FileWindow.chunk), window.fileSize - at)))
            let lastStart = loaded - headerLength
            if lastStart < 0 { break }
            var checked = 0
            var hashed = 0
            let firstByte = UInt8(truncatingIfNeeded: generation)
            let hit: (index: Int, frame: RecordFrame.Header)? = window.withBytes(at, loaded) { raw in
                var index = 0
                while index <= lastStart {
                    checked += 1
                    if raw[index + 16] == firstByte, RecordFrame.load(raw, index + 16, UInt64.self) == generation {
                        hashed += 1
                        if RecordFrame.headerVerifies(raw, at: index) { return (index, RecordFrame.Header(raw, at: index)) }
                    }
                    index += 1
                }
                return nil
            }
            searchWork += checked * 8 + hashed * (headerLength - 4)
            guard let hit else {
                at += Int64(lastStart + 1)
                continue
            }
            let found = at + Int64(hit.index)
            guard try body(found, hit.frame) else { return }
            let length = Int64(hit.frame.length)
            at = length <= Int64(JournalFormat.maximumPayloadLength) ? found + Int64(headerLength) + length : found + 1
        }
    }
}

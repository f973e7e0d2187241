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
/// 3. if the record is complete, at least one of its sectors holds the old
///    bytes, zeros, and no single flipped bit outside those sectors would
///    make it verify.
///
/// Damage that breaks any of these is corruption, reported and never cut.
extension JournalScanner {
    mutating func classifyFormat2(_ damage: JournalDamage, at offset: Int64, header: JournalHeader) throws(SystemError) -> JournalStatus {
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

        switch damage {
        case .recordHeaderChecksumMismatch:
            if let corruption = try examineCompleteSpan(damage, span: offset..<(offset + frameHeaderLength),
                                                        covered: (offset + 4)..<(offset + frameHeaderLength),
                                                        checksumAt: offset, knownWritten: nil) {
                return .corrupt(offset: offset, damage: corruption)
            }
        case .checksumMismatch:
            let payloadStart = offset + frameHeaderLength
            let payloadEnd = payloadStart + Int64(verifiedHeader?.length ?? 0)
            if let corruption = try examineCompleteSpan(damage, span: payloadStart..<payloadEnd, covered: payloadStart..<payloadEnd,
                                                        checksumAt: offset + 4, knownWritten: payloadStart) {
                return .corrupt(offset: offset, damage: corruption)
            }
        default:
            // The file ends inside the record: its end had not reached the disk.
            break
        }
        return .tornTail(offset: offset, damage: damage)
    }

    /// Looks at a complete span whose checksum (stored, masked, at
    /// `checksumAt`, over `covered`) fails, and returns the corruption when
    /// no interrupted append explains it: when none of its sectors is all
    /// zero, or when one flipped bit outside the zero sectors would make it
    /// verify. A sector that begins before `knownWritten` also holds bytes
    /// of the record's verified header: when one of those is non-zero, the
    /// sector reached the disk whole.
    private mutating func examineCompleteSpan(_ damage: JournalDamage, span: Range<Int64>, covered: Range<Int64>,
                                              checksumAt: Int64, knownWritten: Int64?) throws(SystemError) -> JournalDamage? {
        let sector = Int64(JournalFormat.sectorSize)
        var zeroPieces: [Range<Int64>] = []
        var start = span.lowerBound
        while start < span.upperBound {
            let sectorStart = start / sector * sector
            let end = min(span.upperBound, sectorStart + sector)
            // A sector that also holds a non-zero byte of the record's
            // verified header reached the disk whole. (Header bytes that are
            // all zero prove nothing: they equal the old bytes.)
            var holdsVerifiedBytes = false
            if let knownWritten, sectorStart < knownWritten {
                let headerPart = max(sectorStart, knownWritten - Int64(JournalFormat.recordHeaderLength))..<knownWritten
                holdsVerifiedBytes = try firstNonZeroByte(in: headerPart) != nil
            }
            if !holdsVerifiedBytes, try firstNonZeroByte(in: start..<end) == nil { zeroPieces.append(start..<end) }
            start = end
        }
        // A write cut short by an error (its cut-back failing too) leaves
        // the first bytes of the record and zeros after them: a trailing run
        // of zeros may be unwritten as well. Only an error path produces it,
        // so a single flipped bit inside that run still counts as a flip
        // (the two can leave the same bytes; refusing is the safe reading).
        let endsInZero: Bool
        if let last = try lastNonZeroByte(in: span) { endsInZero = last + 1 < span.upperBound } else { endsInZero = true }
        if zeroPieces.isEmpty && !endsInZero { return .damagedCompleteRecord(damage) }
        func outsideZeros(_ byte: Int64) -> Bool { !zeroPieces.contains { $0.contains(byte) } }

        _ = try window.load(checksumAt, 4)
        let stored = window.withBytes(checksumAt, 4) { RecordFrame.load($0, 0, UInt32.self) }
        var running = CRC32C.Running()
        var at = covered.lowerBound
        while at < covered.upperBound {
            let count = try window.load(at, Int(min(Int64(FileWindow.chunk), covered.upperBound - at)))
            if count == 0 { break }
            window.withBytes(at, count) { running.update($0) }
            at += Int64(count)
        }
        let computed = running.value
        if let flip = CRC32C.singleBitError(syndrome: computed ^ CRC32C.unmask(stored), length: covered.count) {
            let byte = covered.lowerBound + Int64(flip.byte)
            if outsideZeros(byte) { return .flippedBit(damage, byteOffset: byte, bit: flip.bit) }
        }
        for bit in 0..<32 where CRC32C.mask(computed) == stored ^ (1 << UInt32(bit)) {
            let byte = checksumAt + Int64(bit / 8)
            if outsideZeros(byte) { return .flippedBit(damage, byteOffset: byte, bit: bit % 8) }
        }
        return nil
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

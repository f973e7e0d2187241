/// Format 1.x damage classification (`journals/FORMAT.md`, section 3.2, the
/// 1.x paragraph): damage is a torn tail when no valid record of the file's
/// generation starts at a later offset, and corrupt otherwise.
///
/// A 1.x checksum covers a record's header and payload, so checking one
/// candidate offset costs its claimed length, up to 16 MiB. Checking each
/// candidate on its own makes a crafted tail quadratic; instead one forward
/// pass keeps a running CRC-32C of the tail and takes each candidate's
/// checksum from the running values at its two ends (CRC-32C is affine:
/// ``CRC32C/range(start:end:length:)``). Every byte is hashed at most once
/// per search, whatever the candidates claim.
extension JournalScanner {
    /// A later offset whose header names the file's generation and a length
    /// that fits the file: its checksum is settled when the pass reaches `end`.
    struct Format1Candidate {
        var offset: Int64
        var end: Int64
        var checksum: UInt32
        /// The running CRC-32C at `offset + 4`, where the checksummed bytes start.
        var startCRC: UInt32 = 0
    }

    /// The fixed work charged for settling one candidate (a CRC shift by its length).
    static let format1CandidateWork = 32

    /// Format 1.x: damage is corruption when a later offset holds a valid
    /// record of this generation. A record found wholly inside the damaged
    /// record's own extent is not evidence when that record is one an
    /// interrupted append leaves (``tornFormat1Extent(_:at:generation:expectedSequence:)``):
    /// it is a frame inside the payload being written.
    mutating func classifyFormat1(_ damage: JournalDamage, at offset: Int64, generation: UInt64, expectedSequence: UInt64) throws -> JournalStatus {
        let later: Int64?
        do {
            let excused = try tornFormat1Extent(damage, at: offset, generation: generation, expectedSequence: expectedSequence)
            later = try validFormat1Records(from: offset + 1, generation: generation,
                                            excusing: excused.map { offset..<$0 }, firstOnly: true).first
        } catch { throw ioError(error) }
        if let later {
            return .corrupt(offset: offset, damage: .damageBeforeValidRecord(damage, validRecordAt: later))
        }
        return .tornTail(offset: offset, damage: damage)
    }

    /// The end of the damaged 1.x record at `offset` when the record is one
    /// an interrupted append leaves, so that records wholly inside it are
    /// payload, not evidence; `nil` when that is not provable. It is when:
    /// its whole declared extent is in the file and its checksum fails; its
    /// header names this file's generation, the next sequence number and a
    /// valid type (the header reached the disk); one 512-byte sector piece
    /// of it is all zero or its last byte is zero (a sector that never
    /// reached the disk, or a write cut short); and no single bit cleared in
    /// its length makes it verify (a flipped length bit would otherwise hide
    /// the durable records it swallowed).
    mutating func tornFormat1Extent(_ damage: JournalDamage, at offset: Int64, generation: UInt64, expectedSequence: UInt64) throws(SystemError) -> Int64? {
        guard case .checksumMismatch = damage else { return nil }
        let headerLength = JournalFormat.version1RecordHeaderLength
        guard try window.load(offset, headerLength) == headerLength else { return nil }
        let frame = window.withBytes(offset, headerLength) { RecordFrame.Header(version1: $0, at: 0) }
        guard frame.generation == generation, frame.sequence == expectedSequence, frame.type != .invalid else { return nil }
        let length = Int(frame.length)
        let end = offset + Int64(headerLength + length)
        guard length <= JournalFormat.maximumPayloadLength, end <= window.fileSize else { return nil }
        var headerFields = window.copy(offset + 4, headerLength - 4)

        // The mark of a torn write.
        var torn = false
        var piece = offset
        let sector = Int64(JournalFormat.sectorSize)
        while piece < end && !torn {
            let pieceEnd = min((piece / sector + 1) * sector, end)
            let count = Int(pieceEnd - piece)
            guard try window.load(piece, count) == count else { return nil }
            searchWork += count
            torn = window.withBytes(piece, count) { raw in !raw.contains { $0 != 0 } }
            if pieceEnd == end, !torn {
                torn = window.withBytes(end - 1, 1) { $0[0] == 0 }
            }
            piece = pieceEnd
        }
        guard torn else { return nil }

        // A flipped length bit: the lengths with one set bit cleared, each
        // checked from one running CRC over the payload.
        let shorter = (0..<32).compactMap { bit -> Int? in length & (1 << bit) != 0 ? length & ~(1 << bit) : nil }.sorted()
        guard !shorter.isEmpty else { return end }
        var running = CRC32C.Running()
        var position = offset + Int64(headerLength)
        for candidate in shorter {
            let target = offset + Int64(headerLength + candidate)
            while position < target {
                let count = try window.load(position, Int(min(Int64(FileWindow.chunk), target - position)))
                guard count > 0 else { return nil }
                window.withBytes(position, count) { running.update($0) }
                searchWork += count
                position += Int64(count)
            }
            for i in 0..<4 { headerFields[i] = UInt8(truncatingIfNeeded: UInt32(candidate) >> UInt32(8 * i)) }
            let crc = CRC32C.combine(CRC32C.checksum(headerFields), running.value, secondLength: candidate)
            searchWork += Self.format1CandidateWork
            if CRC32C.mask(crc) == frame.checksum { return nil }
        }
        return end
    }

    /// The offsets at or after `first` where a format-1.x record of
    /// `generation` verifies, ascending (with `firstOnly`, only the
    /// smallest). Records wholly inside `excused` are left out.
    ///
    /// One pass: each offset's generation field is compared once; each
    /// candidate (generation matches, type not 0, length within 16 MiB and
    /// the file) waits in a queue ordered by its end, and is settled from
    /// the running CRC there. Bytes are hashed only while a candidate is
    /// open, at most once each.
    mutating func validFormat1Records(from first: Int64, generation: UInt64, excusing excused: Range<Int64>? = nil,
                                      firstOnly: Bool) throws(SystemError) -> [Int64] {
        let headerLength = JournalFormat.version1RecordHeaderLength
        let fileSize = window.fileSize
        let lastCandidate = fileSize - Int64(headerLength)
        let segment = Int64(FileWindow.chunk - headerLength)
        let maximumLength = JournalFormat.maximumPayloadLength
        let generationLowByte = UInt8(truncatingIfNeeded: generation)
        var found: [Int64] = []
        var best: Int64?
        var awaiting: [Format1Candidate] = []
        var awaitingHead = 0
        var open = Format1CandidateQueue()
        var running = CRC32C.Running()
        var position = first
        var segmentStart = first
        while segmentStart < fileSize {
            let discovering = segmentStart <= lastCandidate && segmentStart < (best ?? .max)
            if !discovering && open.isEmpty && awaitingHead == awaiting.count { break }
            let segmentEnd = min(segmentStart + segment, fileSize)
            let loaded = try window.load(segmentStart, Int(segmentEnd - segmentStart) + headerLength)
            if loaded == 0 { break }
            if discovering {
                let stop = min(segmentEnd, lastCandidate + 1, best ?? .max)
                let count = min(Int(stop - segmentStart), loaded - headerLength + 1)
                if count > 0 {
                    searchWork += count
                    let base = segmentStart
                    window.withBytes(base, count + headerLength - 1) { raw in
                        for i in 0..<count where raw[i + 12] == generationLowByte {
                            guard RecordFrame.load(raw, i + 12, UInt64.self) == generation else { continue }
                            let length = Int(RecordFrame.load(raw, i + 4, UInt32.self))
                            guard length <= maximumLength else { continue }
                            let at = base + Int64(i)
                            let end = at + Int64(headerLength + length)
                            guard end <= fileSize, RecordFrame.load(raw, i + 8, UInt16.self) != 0 else { continue }
                            if let excused, excused.contains(at), end <= excused.upperBound { continue }
                            awaiting.append(Format1Candidate(offset: at, end: end, checksum: RecordFrame.load(raw, i, UInt32.self)))
                        }
                    }
                }
            }
            let reachable = segmentStart + Int64(loaded)
            // Settle the starts and ends that fall in this segment, in file order.
            while true {
                let nextStart = awaitingHead < awaiting.count ? awaiting[awaitingHead].offset + 4 : .max
                let nextEnd = open.first?.end ?? .max
                let at = min(nextStart, nextEnd)
                if at > segmentEnd || at > reachable { break }
                if open.isEmpty && nextStart <= nextEnd {
                    // Nothing open needs the bytes before: skip them unhashed.
                    running = CRC32C.Running()
                    position = at
                }
                if at > position {
                    let count = Int(at - position)
                    window.withBytes(position, count) { running.update($0) }
                    searchWork += count
                    position = at
                }
                if nextStart <= nextEnd {
                    var candidate = awaiting[awaitingHead]
                    awaitingHead += 1
                    candidate.startCRC = running.value
                    open.push(candidate)
                } else {
                    let candidate = open.pop()
                    if candidate.offset < (best ?? .max) {
                        searchWork += Self.format1CandidateWork
                        let crc = CRC32C.range(start: candidate.startCRC, end: running.value,
                                               length: Int(candidate.end - candidate.offset - 4))
                        if CRC32C.mask(crc) == candidate.checksum {
                            found.append(candidate.offset)
                            if firstOnly { best = candidate.offset }
                        }
                    }
                }
            }
            if awaitingHead > 4096 && awaitingHead * 2 > awaiting.count {
                awaiting.removeFirst(awaitingHead)
                awaitingHead = 0
            }
            if open.isEmpty {
                running = CRC32C.Running()
            } else if segmentEnd > position {
                let count = Int(min(segmentEnd, reachable) - position)
                if count > 0 {
                    window.withBytes(position, count) { running.update($0) }
                    searchWork += count
                }
            }
            position = segmentEnd
            segmentStart = segmentEnd
        }
        if firstOnly { return best.map { [$0] } ?? [] }
        return found.sorted()
    }
}

/// A binary min-heap of 1.x candidates by end offset.
struct Format1CandidateQueue {
    private var items: [JournalScanner.Format1Candidate] = []

    var isEmpty: Bool { items.isEmpty }
    var first: JournalScanner.Format1Candidate? { items.first }

    mutating func push(_ candidate: JournalScanner.Format1Candidate) {
        items.append(candidate)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].end < items[parent].end else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the candidate with the smallest end; the queue must not be empty.
    mutating func pop() -> JournalScanner.Format1Candidate {
        let top = items[0]
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < items.count && items[left].end < items[smallest].end { smallest = left }
                if right < items.count && items[right].end < items[smallest].end { smallest = right }
                if smallest == parent { break }
                items.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return top
    }
}

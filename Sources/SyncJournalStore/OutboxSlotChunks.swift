/// The outbox's places in queue order, in small chunks gathered into groups:
/// when two states share the queue (the visible and the staged one), a
/// write copies the chunk it touches (at most 32 places), its group (at most
/// 64 chunk references) and the list of groups (one reference per 2,048
/// places), never the whole queue. The tail, where every edit appends, is
/// the part two states share most often, so a small chunk there keeps an
/// edit's copy small however long the queue is.
struct OutboxSlotChunks: Sendable {
    private static let chunkShift = 5
    private static let chunkSize = 1 << chunkShift
    private static let groupShift = 6
    private static let groupSize = 1 << groupShift
    /// Places per group.
    private static let groupSpan = chunkSize << groupShift

    /// Groups of chunks of places; `nil` where an entry was removed.
    private var groups: [[[OutboxSlot?]]] = []
    /// Places used (the last chunk may be partly filled).
    private(set) var count = 0

    /// The slot at `place` (below ``count``).
    subscript(place: Int) -> OutboxSlot? {
        @inline(__always) get {
            groups[place / Self.groupSpan][(place >> Self.chunkShift) & (Self.groupSize - 1)][place & (Self.chunkSize - 1)]
        }
        @inline(__always) _modify {
            yield &groups[place / Self.groupSpan][(place >> Self.chunkShift) & (Self.groupSize - 1)][place & (Self.chunkSize - 1)]
        }
    }

    /// Adds `slot` at the end.
    mutating func append(_ slot: OutboxSlot?) {
        let place = count
        if place % Self.groupSpan == 0 {
            groups.append([])
            groups[groups.count - 1].reserveCapacity(Self.groupSize)
        }
        let last = groups.count - 1
        if place & (Self.chunkSize - 1) == 0 {
            var chunk: [OutboxSlot?] = []
            chunk.reserveCapacity(Self.chunkSize)
            chunk.append(slot)
            groups[last].append(chunk)
        } else {
            groups[last][groups[last].count - 1].append(slot)
        }
        count += 1
    }

    /// Empties it.
    mutating func removeAll() {
        groups.removeAll()
        count = 0
    }

    /// Walks the places from `start` to the end, chunk by chunk, until
    /// `body` returns false; empty places are skipped.
    func forEach(from start: Int, _ body: (OutboxSlot) -> Bool) {
        var place = start
        while place < count {
            let chunk = groups[place / Self.groupSpan][(place >> Self.chunkShift) & (Self.groupSize - 1)]
            let chunkStart = place & ~(Self.chunkSize - 1)
            let end = min(count, chunkStart + Self.chunkSize)
            for offset in (place - chunkStart)..<(end - chunkStart) {
                if let slot = chunk[offset], !body(slot) { return }
            }
            place = end
        }
    }
}

import Dispatch
import SyncJournalPlatform

extension JournalWriter {
    /// Zeros written once, the source of every preallocation write.
    static let zeros = [UInt8](repeating: 0, count: 64 << 10)

    /// The file sizes preallocation steps through are multiples of this, so
    /// that a size a power cut leaves is never mistaken for the end of a
    /// closed journal (`journals/FORMAT.md`, section 3.2, the closed end).
    static let preallocationGranule: Int64 = 4096

    /// The minor version of the journals a writer creates (a new journal, a
    /// checkpoint): the current one, whose closed-end rule needs the file to
    /// grow in preallocation steps; 0 (the rules of 2.0 and 2.1) for a writer
    /// told never to preallocate, whose file grows with each write.
    static func minorVersionForNewFiles(preallocationBytes: Int) -> UInt16 {
        preallocationBytes > 0 ? JournalFormat.minorVersion : 0
    }

    /// Makes sure the file extends past `end`, the end of the append about
    /// to be written (on the writer's queue): when it does not, sets the
    /// file's size to the next multiple of the preallocation step beyond
    /// `end` (one size change, always to a multiple of
    /// ``preallocationGranule``), then writes zeros over the new space so
    /// that appends into it change no block mapping. The size becomes
    /// durable with the `fdatasync` that follows the append, the one sync
    /// per extension that still has metadata to flush.
    ///
    /// An append is never written past the file's size: the size a power
    /// cut can leave is then always a multiple of the granule (or an end
    /// that a synced cut made), which lets a reader tell a closed journal
    /// whose tail turned to zeros from a crashed one. When the size cannot
    /// be changed the append fails with that error; zeros that cannot be
    /// written are left as a hole, which still reads as zeros.
    func preallocate(through end: Int64) throws(SystemError) {
        let (allocated, keepsClosedEnd) = state.withLock { ($0.allocatedEnd, $0.header.keepsClosedEnd) }
        guard end > allocated else { return }
        // Preallocation off, in a file that does not promise the closed end
        // (2.0, 2.1): the file grows with each write.
        if preallocationBytes == 0 && !keepsClosedEnd { return }
        let granule = Self.preallocationGranule
        let step = max(granule, (Int64(preallocationBytes) + granule - 1) / granule * granule)
        let target = (end / step + 1) * step
        do { try io.system.ftruncate(fd, target) } catch { throw error.at(path) }
        state.withLock { $0.allocatedEnd = max($0.allocatedEnd, target) }
        var at = allocated
        while at < target {
            let count = Int(min(Int64(Self.zeros.count), target - at))
            do throws(SystemError) {
                try io.writeAll(fd, count == Self.zeros.count ? Self.zeros : [UInt8](repeating: 0, count: count), at: at, path: path)
            } catch { break }
            at += Int64(count)
        }
    }
}

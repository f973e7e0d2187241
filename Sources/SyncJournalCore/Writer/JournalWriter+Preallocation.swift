import Dispatch
import SyncJournalPlatform

extension JournalWriter {
    /// Zeros written once, the source of every preallocation write.
    static let zeros = [UInt8](repeating: 0, count: 64 << 10)

    /// Extends the file with zeros past `end` when the append about to be
    /// written there would leave the preallocated space (on the writer's
    /// queue): up to the next multiple of ``Options/preallocationBytes``
    /// beyond `end`. The zeros become durable with the `fdatasync` that
    /// follows the append, the one sync per extension that still changes the
    /// file's size.
    ///
    /// Preallocation only ever saves time, so it never fails an append: when
    /// the disk is too full for the zeros (or a write of them fails) it stops
    /// where it got to, and the append itself reports whatever the disk says.
    func preallocate(through end: Int64) {
        guard preallocationBytes > 0 else { return }
        let allocated = state.withLock { $0.allocatedEnd }
        guard end > allocated else { return }
        let step = Int64(preallocationBytes)
        let target = (end / step + 1) * step
        var at = allocated
        while at < target {
            let count = Int(min(Int64(Self.zeros.count), target - at))
            do throws(SystemError) {
                try io.writeAll(fd, count == Self.zeros.count ? Self.zeros : [UInt8](repeating: 0, count: count), at: at, path: path)
            } catch { break }
            at += Int64(count)
        }
        state.withLock { $0.allocatedEnd = max($0.allocatedEnd, at) }
    }
}

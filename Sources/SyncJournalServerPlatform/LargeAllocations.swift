#if canImport(Glibc)
import Glibc
#endif

/// How the C allocator serves large blocks. glibc's malloc serves a block
/// from its mmap threshold up with a mapping of its own, unmapped when the
/// block is freed; but it raises that threshold (up to 32 MiB) each time such
/// a block is freed, after which large blocks come from per-thread heaps
/// that keep their freed memory. A server whose requests each build and
/// drop megabytes on any of its worker threads then keeps growing, one
/// request's worth per heap. Fixing the threshold turns that off.
///
/// ```swift
/// LargeAllocations.returnToSystem(from: 1 << 20)   // at server start
/// ```
package enum LargeAllocations {
    /// Serves every block of `bytes` or more with its own mapping, given
    /// back to the system when freed (glibc; elsewhere nothing to do, and
    /// `false`). Returns whether the allocator took the setting.
    @discardableResult
    package static func returnToSystem(from bytes: Int) -> Bool {
        #if canImport(Glibc)
        // Swift's Glibc module leaves out <malloc.h>: mallopt is looked up by name.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return false }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        return mallopt(mmapThreshold, Int32(clamping: bytes)) == 1
        #else
        return false
        #endif
    }

    /// `M_MMAP_THRESHOLD` of glibc's <malloc.h>.
    private static let mmapThreshold: Int32 = -3
}

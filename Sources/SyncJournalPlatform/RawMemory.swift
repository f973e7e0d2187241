#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Byte comparisons the C library does faster than a loop.
package enum RawMemory {
    /// Whether the two buffers hold the same bytes (`memcmp`). Inlinable:
    /// string decoding calls it once per string on the replay path.
    @inlinable
    package static func equal(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> Bool {
        guard first.count == second.count else { return false }
        guard first.count > 0, let a = first.baseAddress, let b = second.baseAddress else { return true }
        return memcmp(a, b, first.count) == 0
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a lock, with the interface of the Synchronization
/// module's `Mutex` (`init(_:)`, `withLock(_:)`).
///
/// The package declares iOS 17 and macOS 14, and Synchronization's `Mutex`
/// needs iOS 18 and macOS 15; this one is a `pthread_mutex_t`, available
/// everywhere. Modules import `SyncJournalPlatform` instead of
/// `Synchronization` and keep writing `Mutex`.
package final class Mutex<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched while `lock` is held.
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// Guards `initialValue`.
    package init(_ initialValue: Value) {
        value = initialValue
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(lock, nil)
        precondition(result == 0, "pthread_mutex_init failed: \(Errno(rawValue: result))")
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deinitialize(count: 1)
        lock.deallocate()
    }

    /// Runs `body` with the value while holding the lock; `body` must not
    /// call `withLock` on the same mutex (it is not recursive).
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return try body(&value)
    }
}

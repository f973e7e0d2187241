import Foundation

/// Bytes handed over from a reader thread (a semaphore orders the accesses).
package final class CapturedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = Data()
    package init() {}
    package func set(_ value: Data) { lock.lock(); stored = value; lock.unlock() }
    package var value: Data { lock.lock(); defer { lock.unlock() }; return stored }
}

import Foundation

/// Bytes handed over from a reader thread (a semaphore orders the accesses).
final class CapturedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = Data()
    func set(_ value: Data) { lock.lock(); stored = value; lock.unlock() }
    var value: Data { lock.lock(); defer { lock.unlock() }; return stored }
}

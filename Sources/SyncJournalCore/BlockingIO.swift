import Dispatch

/// Runs blocking file work on a Dispatch queue, never on the Swift
/// concurrency pool, and suspends the caller until it finishes.
package enum BlockingIO {
    package static let queue = DispatchQueue(label: "SyncJournal.blocking-io", attributes: .concurrent)

    /// Runs `body` on `queue` and returns what it returns, without blocking the caller's thread.
    package static func run<T: Sendable, E: Error>(on queue: DispatchQueue = queue, _ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(E) { continuation.resume(returning: .success(try body())) } catch { continuation.resume(returning: .failure(error)) }
            }
        }
        return try result.get()
    }
}

import SyncJournalPlatform

/// Runs `body` on a thread outside the Swift concurrency pool and returns
/// its result: for a test that must make a blocking call (wait for a child
/// process, run code that blocks until async work ends) without holding one
/// of the pool's few threads, which other tests, or that very work, need.
///
/// ```swift
/// let status = await onThreadOfItsOwn { process.waitUntilExit(); return process.terminationStatus }
/// ```
package func onThreadOfItsOwn<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        let started = ParkedThreads.shared.run { continuation.resume(returning: body()) }
        // No thread at all: run here rather than never.
        if !started { continuation.resume(returning: body()) }
    }
}

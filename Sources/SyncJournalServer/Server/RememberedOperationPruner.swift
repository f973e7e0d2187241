import Dispatch
import SyncJournalPlatform

/// Forgets remembered operation ids past the storage's retention, on a
/// thread of its own: at start and then every ``intervalMilliseconds``, batch
/// after batch of at most ``batchSize`` (each batch its own short write
/// transaction, so pushes run between batches and no delete holds the
/// database for long), until a batch comes back short. It pauses
/// ``batchPauseMilliseconds`` between batches: SQLite hands its write lock to
/// whoever asks first, and a waiting push polls for it only every 100 ms, so
/// a pruner that asked again at once (or after a shorter pause) kept pushes
/// out until their busy timeout ran out (503s in a load test).
///
/// ```swift
/// let pruner = RememberedOperationPruner(storage: storage, intervalMilliseconds: 60_000, batchSize: 1_000) { print($0) }
/// pruner.start()
/// pruner.stop()
/// ```
package final class RememberedOperationPruner: Sendable {
    /// Where the operations are remembered.
    package let storage: any SyncStorage
    /// The pause between two rounds of pruning.
    package let intervalMilliseconds: Int
    /// The most operations one transaction forgets.
    package let batchSize: Int
    /// The pause between two batches of one round.
    package let batchPauseMilliseconds: Int
    private let log: @Sendable (String) -> Void
    private let wakeUp = DispatchSemaphore(value: 0)
    private let stopping = Atomic(false)
    private let thread = Mutex<PlatformThread?>(nil)

    /// A pruner of `storage`, not yet running.
    package init(storage: any SyncStorage, intervalMilliseconds: Int, batchSize: Int, batchPauseMilliseconds: Int = 250,
                 log: @escaping @Sendable (String) -> Void) {
        self.storage = storage
        self.intervalMilliseconds = max(1, intervalMilliseconds)
        self.batchSize = max(1, batchSize)
        self.batchPauseMilliseconds = max(0, batchPauseMilliseconds)
        self.log = log
    }

    /// Starts the pruning thread (a second call does nothing); `false` if
    /// the thread could not be made.
    @discardableResult
    package func start() -> Bool {
        thread.withLock { running in
            if running != nil { return true }
            running = PlatformThread.start { [self] in
                repeat {
                    _ = pruneUntilCaughtUp(pausing: true)
                    collectAttachments()
                } while !stopping.load(ordering: .relaxed)
                    && wakeUp.wait(timeout: .now() + .milliseconds(intervalMilliseconds)) == .timedOut
            }
            return running != nil
        }
    }

    /// One round: batches until one forgets fewer than ``batchSize`` (or the
    /// pruner stops, or a batch fails, which is logged and left for the next
    /// round), `pausing` between batches or not. Returns how many operations it forgot.
    package func pruneUntilCaughtUp(pausing: Bool = false) -> Int {
        var forgotten = 0
        while !stopping.load(ordering: .relaxed) {
            do throws(StorageError) {
                let batch = try storage.pruneRememberedOperations(limit: batchSize)
                forgotten += batch
                if batch < batchSize { break }
                // Woken during the pause: the pruner is stopping (the loop checks).
                if pausing && batchPauseMilliseconds > 0 {
                    _ = wakeUp.wait(timeout: .now() + .milliseconds(batchPauseMilliseconds))
                }
            } catch {
                log("pruning remembered operations failed (retried in \(intervalMilliseconds) ms): \(error)")
                break
            }
        }
        return forgotten
    }

    /// Stops the thread after the batch it is in, and waits for it.
    /// Deletes the attachments past their grace period (journals/PROTOCOL.md,
    /// "Collection") by the storage's clock, when the storage keeps them:
    /// the server's other upkeep, once a round.
    package func collectAttachments() {
        guard let attachments = storage as? any AttachmentStorage else { return }
        do throws(StorageError) {
            try attachments.collectAttachments(now: attachments.attachmentClock())
        } catch {
            log("collecting attachments failed (retried in \(intervalMilliseconds) ms): \(error)")
        }
    }

    package func stop() {
        stopping.store(true, ordering: .relaxed)
        wakeUp.signal()
        let running = thread.withLock { running -> PlatformThread? in
            defer { running = nil }
            return running
        }
        running?.join()
    }
}

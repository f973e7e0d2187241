import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Bridges one callback-based `URLSession` data task to `async`.
///
/// The continuation is resumed exactly once: by the completion handler, or
/// by a cancellation or the deadline, whichever comes first; each path takes
/// the continuation under the lock, so a later one finds none. A
/// cancellation or the deadline answers at once and then cancels the data
/// task, rather than waiting for the session to call back: a session that
/// never calls back after a cancel (seen with `URLSession` on Linux) would
/// otherwise leave the caller suspended for ever.
/// `URLSession` on Linux also truncates a request's timeout to whole
/// seconds (0.3 s times out at once, 1.5 s after 1 s), so the call keeps its
/// own clock and gives the session a looser one as a backstop.
final class DataTaskCall: @unchecked Sendable {
    // @unchecked: every stored property is read and written under `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<DataTaskOutcome, Never>?
    private var task: URLSessionDataTask?
    private var isCancelled = false
    private var isExpired = false

    private init() {}

    /// Where deadlines fire.
    private static let timerQueue = DispatchQueue(label: "SyncJournalHTTP.DataTaskCall.deadline")

    /// Runs `request` in `session` and waits for its outcome, at most `timeout`.
    static func run(_ request: URLRequest, in session: URLSession, timeout: Duration) async -> DataTaskOutcome {
        let call = DataTaskCall()
        // A timer, not a synchronisation: it only cuts the exchange short. It
        // runs on a dispatch queue, not in the concurrency pool, so a pool
        // busy with CPU-bound work cannot hold it back.
        let deadline = DispatchWorkItem { call.expire() }
        Self.timerQueue.asyncAfter(deadline: .now() + timeout.timeInterval, execute: deadline)
        defer { deadline.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<DataTaskOutcome, Never>) in
                call.start(request, in: session, continuation: continuation)
            }
        } onCancel: {
            call.cancel()
        }
    }

    private func start(_ request: URLRequest, in session: URLSession, continuation: CheckedContinuation<DataTaskOutcome, Never>) {
        lock.lock()
        if isCancelled || isExpired {
            let outcome: DataTaskOutcome = isCancelled ? .cancelled : .timedOut
            lock.unlock()
            continuation.resume(returning: outcome)
            return
        }
        self.continuation = continuation
        let task = session.dataTask(with: request) { [self] data, response, error in
            finish(data: data, response: response, error: error)
        }
        self.task = task
        lock.unlock()
        task.resume()
    }

    private func finish(data: Data?, response: URLResponse?, error: Error?) {
        lock.lock()
        let continuation = self.continuation
        self.continuation = nil
        self.task = nil
        let wasCancelled = isCancelled
        let wasExpired = isExpired
        lock.unlock()
        let outcome: DataTaskOutcome
        if let error {
            outcome = wasCancelled ? .cancelled : (wasExpired ? .timedOut : .failed(error))
        } else if let response {
            outcome = .completed(response, data ?? Data())
        } else {
            outcome = .failed(URLError(.badServerResponse))
        }
        continuation?.resume(returning: outcome)
    }

    private func cancel() {
        lock.lock()
        isCancelled = true
        let (task, continuation) = (self.task, self.continuation)
        self.continuation = nil
        lock.unlock()
        continuation?.resume(returning: .cancelled)
        task?.cancel()
    }

    private func expire() {
        lock.lock()
        isExpired = true
        let (task, continuation) = (self.task, self.continuation)
        self.continuation = nil
        lock.unlock()
        continuation?.resume(returning: .timedOut)
        task?.cancel()
    }
}

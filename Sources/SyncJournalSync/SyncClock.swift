import SyncJournalProtocol
/// Where the sync engine reads the time and sets its timers. Injected, so
/// tests and the simulator drive time by hand and never sleep.
///
/// ```swift
/// let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["pin"]),
///                         clock: ContinuousSyncClock())
/// ```
public protocol SyncClock: Sendable {
    /// Milliseconds on a monotonic scale (any origin).
    func now() -> Int64
    /// Runs `action` once `now()` reaches `deadline`, unless the returned
    /// timer is cancelled first.
    func schedule(at deadline: Int64, _ action: @escaping @Sendable () async -> Void) -> SyncTimer
}

/// A timer set with ``SyncClock/schedule(at:_:)``.
public struct SyncTimer: Sendable {
    private let cancelAction: @Sendable () -> Void

    /// A timer that runs `cancel` when cancelled.
    public init(cancel: @escaping @Sendable () -> Void) {
        cancelAction = cancel
    }

    /// Stops the timer if it has not fired; harmless afterwards.
    public func cancel() { cancelAction() }
}

/// The machine's monotonic clock; timers are tasks that sleep.
public struct ContinuousSyncClock: SyncClock {
    private let origin = ContinuousClock.now

    /// A clock whose zero is now.
    public init() {}

    public func now() -> Int64 {
        let elapsed = ContinuousClock.now - origin
        return elapsed.components.seconds * 1_000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    }

    public func schedule(at deadline: Int64, _ action: @escaping @Sendable () async -> Void) -> SyncTimer {
        let delay = max(0, deadline - now())
        let task = Task {
            do { try await Task.sleep(for: .milliseconds(delay)) } catch { return }
            await action()
        }
        return SyncTimer { task.cancel() }
    }
}

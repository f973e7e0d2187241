import Dispatch
import SyncJournalPlatform

/// Sends the change notifications of committed pushes in rounds: one
/// statement, in one transaction of its own, carries every change
/// committed since the round before, one notification per user.
///
/// A notification per push costs the database a transaction of its own
/// (a transaction id, a commit record, a wake-up of every listening
/// server): measured, about 140 µs of PostgreSQL CPU for each
/// single-mutation push. A round starts as soon as a push commits, but
/// never sooner than ``minimumRoundInterval`` after the round before, and
/// takes every change committed meanwhile: an idle server sends each
/// notification at once, and a busy one sends a few rounds every
/// millisecond-scale interval instead of one transaction per push.
///
/// Runs on a thread of its own (it blocks on libpq), started with the first
/// change and ended by ``stop()``. Best effort, as a notification always
/// was: a round that fails is tried once more on a new connection, then
/// dropped; a wait it would have answered ends at its timeout, and the
/// next wait's first look at storage sees the change.
final class PostgreSQLChangeAnnouncer: Sendable {
    private struct State {
        /// Each user's kinds committed since the last round (empty: any kind).
        var pending: [PostgreSQLChangeSubject: Set<String>] = [:]
        /// Whether the thread has been woken for ``pending`` and not yet taken it.
        var signalled = false
        var thread: PlatformThread?
        var stopped = false
        /// Rounds taken from ``pending`` so far, and how many of them have been sent (or dropped).
        var roundsTaken = 0
        var roundsEnded = 0
        /// Callers of ``flush(timeoutMilliseconds:)``: the round each waits for.
        var flushing: [(round: Int, signal: DispatchSemaphore)] = []
    }

    private let state = Mutex(State())
    private let wakeUp = DispatchSemaphore(value: 0)
    private let send: @Sendable ([String]) throws(PostgreSQLError) -> Void
    /// The least time from one round's start to the next one's, in microseconds.
    let minimumRoundInterval: Int64

    /// An announcer that sends a round's payloads with `send` (one call per
    /// attempt; it throws when the round failed), starting rounds at least
    /// `minimumRoundInterval` microseconds apart.
    init(minimumRoundInterval: Int64 = 5_000, send: @escaping @Sendable ([String]) throws(PostgreSQLError) -> Void) {
        self.minimumRoundInterval = max(0, minimumRoundInterval)
        self.send = send
    }

    /// Queues the notification that `user` committed rows of `kinds`
    /// (empty: any kind) and returns without waiting for it.
    func announce(user: String, kinds: Set<String>) {
        announce(.committed(user: user, kinds: kinds))
    }

    /// Queues `change` for the next round (see ``announce(user:kinds:)``);
    /// changes of one subject queued meanwhile go as one notification.
    func announce(_ change: StorageChange) {
        guard let (subject, names) = PostgreSQLChangeSubject.of(change) else { return }
        let wake = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            if let known = state.pending[subject] {
                state.pending[subject] = subject.merged(known, names)
            } else {
                state.pending[subject] = names
            }
            // Once, with the first change; creating a thread under the lock keeps a second from starting.
            if state.thread == nil { state.thread = PlatformThread.start { [self] in run() } }
            if state.signalled { return false }
            state.signalled = true
            return true
        }
        if wake { wakeUp.signal() }
    }

    /// Sends what is queued, then ends the thread; later announcements are dropped.
    func stop() {
        let thread = state.withLock { state -> PlatformThread? in
            state.stopped = true
            defer { state.thread = nil }
            return state.thread
        }
        guard let thread else { return }
        wakeUp.signal()
        thread.join()
    }

    /// Returns once every notification queued before the call has been sent
    /// (or dropped after its retry), or after `timeoutMilliseconds`; returns
    /// whether they went. For a server that stops: what its last pushes
    /// committed still reaches the waits of other servers.
    @discardableResult
    func flush(timeoutMilliseconds: Int = 10_000) -> Bool {
        let signal = DispatchSemaphore(value: 0)
        let done = state.withLock { state -> Bool in
            // Queued changes go in the next round taken; without any, the round under way is the last.
            let round = state.pending.isEmpty ? state.roundsTaken : state.roundsTaken + 1
            if round <= state.roundsEnded || state.thread == nil { return true }
            state.flushing.append((round, signal))
            return false
        }
        return done || signal.wait(timeout: .now() + .milliseconds(timeoutMilliseconds)) == .success
    }

    private func run() {
        var lastRound: Int64?
        while true {
            wakeUp.wait()
            if let lastRound {
                // Pacing, on this thread of its own: the changes of the pause join this round.
                let remaining = minimumRoundInterval - (SystemClock.monotonicNanoseconds() - lastRound) / 1_000
                if remaining > 0 && !state.withLock({ $0.stopped }) { SystemClock.pause(microseconds: UInt32(remaining)) }
            }
            lastRound = SystemClock.monotonicNanoseconds()
            let (payloads, stopped) = state.withLock { state -> ([String], Bool) in
                defer {
                    state.pending = [:]
                    state.signalled = false
                }
                if !state.pending.isEmpty { state.roundsTaken += 1 }
                return (state.pending.map { PostgreSQLChangeNotice.payload($0.key, names: $0.value) }, state.stopped)
            }
            if !payloads.isEmpty {
                do throws(PostgreSQLError) { try send(payloads) } catch {
                    try? send(payloads)
                }
                let flushed = state.withLock { state -> [DispatchSemaphore] in
                    state.roundsEnded += 1
                    let ended = state.roundsEnded
                    let flushed = state.flushing.filter { $0.round <= ended }.map(\.signal)
                    state.flushing.removeAll { $0.round <= ended }
                    return flushed
                }
                for signal in flushed { signal.signal() }
            }
            if stopped { return }
        }
    }
}

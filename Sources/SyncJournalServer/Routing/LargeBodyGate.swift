import Dispatch
import SyncJournalPlatform

/// Bounds the bytes of large request bodies being turned into replies at
/// once. Decoding a push builds its values, storage encodes them, and the
/// reply echoes them: a large push costs several times its body while it
/// runs, so many at once would add up to many times the bodies in flight.
/// Past the bound a request waits its turn (first come, first served) on
/// its worker thread; small bodies never wait.
///
/// ```swift
/// let gate = LargeBodyGate(capacity: 16 << 20, threshold: 1 << 20)
/// let reply = gate.admitting(bytes: body.count) { answer(body) }
/// ```
package final class LargeBodyGate: Sendable {
    private struct State {
        var inUse = 0
        var waiting: [(bytes: Int, turn: DispatchSemaphore)] = []
    }

    /// The most large-body bytes admitted at once (one larger body is admitted alone).
    package let capacity: Int
    /// Bodies smaller than this pass without counting.
    package let threshold: Int
    private let state = Mutex(State())

    /// A gate admitting `capacity` bytes of bodies of at least `threshold` bytes at once.
    package init(capacity: Int, threshold: Int) {
        self.capacity = max(1, capacity)
        self.threshold = threshold
    }

    /// Runs `work` once a body of `bytes` is admitted, and gives its bytes back after.
    package func admitting<Result, Failure: Error>(bytes: Int, _ work: () throws(Failure) -> Result) throws(Failure) -> Result {
        guard bytes >= threshold else { return try work() }
        let cost = min(bytes, capacity)
        let turn = state.withLock { state -> DispatchSemaphore? in
            if state.waiting.isEmpty && state.inUse + cost <= capacity {
                state.inUse += cost
                return nil
            }
            let turn = DispatchSemaphore(value: 0)
            state.waiting.append((cost, turn))
            return turn
        }
        // The bytes are counted for this request by whoever signals its turn.
        turn?.wait()
        defer { release(cost) }
        return try work()
    }

    /// The bytes admitted now (for tests).
    package var bytesInUse: Int { state.withLock { $0.inUse } }

    private func release(_ cost: Int) {
        let turns = state.withLock { state -> [DispatchSemaphore] in
            state.inUse -= cost
            var turns: [DispatchSemaphore] = []
            while let next = state.waiting.first, state.inUse + next.bytes <= capacity || state.inUse == 0 {
                state.inUse += next.bytes
                state.waiting.removeFirst()
                turns.append(next.turn)
            }
            return turns
        }
        for turn in turns { turn.signal() }
    }
}

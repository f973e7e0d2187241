import Dispatch
import Testing
@testable import SyncJournalPlatform

@Suite("Parked threads: an executor's thread is reused by the next executor")
struct ParkedThreadsTests {
    /// Runs `work` through `threads` and returns the identifier of the thread it ran on.
    private func threadOf(_ threads: ParkedThreads) async -> UInt {
        await withCheckedContinuation { continuation in
            let started = threads.run { continuation.resume(returning: PlatformThread.currentIdentifier()) }
            #expect(started)
        }
    }

    @Test("work handed over after a thread's work ended runs on that parked thread, not a new one")
    func parkedThreadIsReused() async {
        let threads = ParkedThreads(idleLifetime: .seconds(600), maximumParked: 4)
        let first = await threadOf(threads)
        while threads.parkedCount == 0 { await Task.yield() }
        let second = await threadOf(threads)
        #expect(second == first)
    }

    @Test("threads beyond the limit end instead of parking")
    func parkingIsBounded() async {
        let threads = ParkedThreads(idleLifetime: .seconds(600), maximumParked: 2)
        // Five at once: each holds its thread until all five run, so five threads exist.
        let gate = DispatchSemaphore(value: 0)
        let running = Atomic(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        #expect(threads.run {
                            if running.add(1, ordering: .relaxed).newValue == 5 { for _ in 0..<5 { gate.signal() } }
                            gate.wait()
                            done.resume()
                        })
                    }
                }
            }
        }
        #expect(running.load(ordering: .relaxed) == 5)
        while threads.parkedCount < 2 { await Task.yield() }
        #expect(threads.parkedCount == 2)
    }

    @Test("with threads leaving as soon as they park, every one of 300 works handed over still runs once")
    func workIsNeverLostToAThreadLeaving() async {
        // A lifetime of zero makes every parked thread time out at once, so
        // handing work to a slot races with its thread leaving.
        let threads = ParkedThreads(idleLifetime: .nanoseconds(0), maximumParked: 4)
        let ran = Atomic(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<300 {
                group.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        #expect(threads.run {
                            _ = ran.add(1, ordering: .relaxed)
                            done.resume()
                        })
                    }
                }
            }
        }
        #expect(ran.load(ordering: .relaxed) == 300)
    }

    @Test("an executor shut down gives its thread to the next executor")
    func executorsShareParkedThreads() async {
        let threads = ParkedThreads(idleLifetime: .seconds(600), maximumParked: 4)
        let first = DedicatedThreadExecutor(threads: threads)
        let firstThread = await withCheckedContinuation { continuation in
            first.perform { continuation.resume(returning: PlatformThread.currentIdentifier()) }
        }
        first.shutdown()
        while threads.parkedCount == 0 { await Task.yield() }
        let second = DedicatedThreadExecutor(threads: threads)
        let secondThread = await withCheckedContinuation { continuation in
            second.perform { continuation.resume(returning: PlatformThread.currentIdentifier()) }
        }
        second.shutdown()
        #expect(secondThread == firstThread)
    }
}

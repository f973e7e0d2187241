import Dispatch
import Testing
@testable import SyncJournalPlatform

@Suite("Dedicated thread executor: work stepping outside for a blocking call")
struct DedicatedThreadExecutorTests {
    /// Something that happened on the executor, in the order it was reported.
    private enum Event: Equatable, Sendable {
        case outside(thread: UInt)
        case ran(String, thread: UInt, holding: Bool)
        case back(thread: UInt, holding: Bool)
    }

    /// Runs `body` on `executor` and returns what it returns.
    private func onExecutor<T: Sendable>(_ executor: DedicatedThreadExecutor, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in executor.perform { continuation.resume(returning: body()) } }
    }

    @Test("work queued while a caller is blocked outside runs on another thread that holds the executor, and the caller's continuation runs holding it afterwards")
    func workRunsWhileCallerIsOutside() async {
        let executor = DedicatedThreadExecutor()
        defer { executor.shutdown() }
        let (events, reporter) = AsyncStream.makeStream(of: Event.self)
        let release = DispatchSemaphore(value: 0)
        executor.perform {
            executor.runOutside({
                reporter.yield(.outside(thread: PlatformThread.currentIdentifier()))
                release.wait()
            }, then: {
                reporter.yield(.back(thread: PlatformThread.currentIdentifier(), holding: executor.isCurrent))
            })
        }
        var iterator = events.makeAsyncIterator()
        guard case .outside(let outsideThread) = await iterator.next() else {
            Issue.record("the caller never stepped outside")
            return
        }
        let meanwhile = await onExecutor(executor) { (PlatformThread.currentIdentifier(), executor.isCurrent) }
        #expect(meanwhile.0 != outsideThread)
        #expect(meanwhile.1)
        release.signal()
        guard case .back(_, let holding) = await iterator.next() else {
            Issue.record("the caller's continuation never ran")
            return
        }
        #expect(holding)
        // The executor goes on serving work afterwards.
        #expect(await onExecutor(executor) { executor.isCurrent })
    }

    @Test("a caller stepping outside while nothing else is queued continues on its own thread, holding the executor, with no hand-over")
    func loneCallerContinuesInline() async {
        let executor = DedicatedThreadExecutor()
        defer { executor.shutdown() }
        let (outside, back, holding) = await withCheckedContinuation { (done: CheckedContinuation<(UInt, UInt, Bool), Never>) in
            executor.perform {
                executor.runOutside({ PlatformThread.currentIdentifier() }, then: { outside in
                    done.resume(returning: (outside, PlatformThread.currentIdentifier(), executor.isCurrent))
                })
            }
        }
        #expect(back == outside)
        #expect(holding)
    }

    @Test("work queued behind a caller that steps outside runs in arrival order before newer work, and the caller's continuation runs after it")
    func orderIsKeptAcrossStepsOutside() async {
        let executor = DedicatedThreadExecutor()
        defer { executor.shutdown() }
        let (events, reporter) = AsyncStream.makeStream(of: Event.self)
        let hold = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        // The executor is kept busy so the next items are queued together
        // (a thread takes them in one round).
        executor.perform { hold.wait() }
        executor.perform {
            executor.runOutside({
                reporter.yield(.outside(thread: PlatformThread.currentIdentifier()))
                release.wait()
            }, then: {
                reporter.yield(.back(thread: PlatformThread.currentIdentifier(), holding: executor.isCurrent))
            })
        }
        for name in ["b", "c"] {
            executor.perform { reporter.yield(.ran(name, thread: PlatformThread.currentIdentifier(), holding: executor.isCurrent)) }
        }
        hold.signal()
        var iterator = events.makeAsyncIterator()
        // The queued work may start on the standby thread before the caller's
        // outside part reports itself: keep what ran until it has.
        var ran: [(name: String, thread: UInt, holding: Bool)] = []
        var outsideThread: UInt?
        while outsideThread == nil, let event = await iterator.next() {
            switch event {
            case .outside(let thread): outsideThread = thread
            case .ran(let name, let thread, let holding): ran.append((name, thread, holding))
            case .back: Issue.record("the caller's continuation ran before its outside part ended")
            }
        }
        guard let outsideThread else {
            Issue.record("the caller never stepped outside")
            return
        }
        executor.perform { reporter.yield(.ran("d", thread: PlatformThread.currentIdentifier(), holding: executor.isCurrent)) }
        while ran.count < 3, case .ran(let name, let thread, let holding)? = await iterator.next() {
            ran.append((name, thread, holding))
        }
        for piece in ran {
            #expect(piece.thread != outsideThread)
            #expect(piece.holding)
        }
        let seen = ran.map(\.name)
        #expect(seen == ["b", "c", "d"])
        release.signal()
        guard case .back(_, let holding) = await iterator.next() else {
            Issue.record("the caller's continuation never ran")
            return
        }
        #expect(holding)
    }

    @Test("with work stepping outside again and again, no two pieces of the executor's work ever run at once and every piece runs once")
    func oneHolderAtATime() async {
        let executor = DedicatedThreadExecutor()
        defer { executor.shutdown() }
        let inside = Atomic(0)
        let overlaps = Atomic(0)
        let ran = Atomic(0)
        let count = 2_000
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for index in 0..<count {
                executor.perform {
                    if inside.add(1, ordering: .relaxed).newValue != 1 { _ = overlaps.add(1, ordering: .relaxed) }
                    _ = inside.add(-1, ordering: .relaxed)
                    guard index % 7 == 0 else {
                        if ran.add(1, ordering: .relaxed).newValue == count { done.resume() }
                        return
                    }
                    executor.runOutside({ for _ in 0..<(index % 300) { _ = ran.load(ordering: .relaxed) } }, then: {
                        if inside.add(1, ordering: .relaxed).newValue != 1 { _ = overlaps.add(1, ordering: .relaxed) }
                        _ = inside.add(-1, ordering: .relaxed)
                        if ran.add(1, ordering: .relaxed).newValue == count { done.resume() }
                    })
                }
            }
        }
        #expect(overlaps.load(ordering: .relaxed) == 0)
        #expect(ran.load(ordering: .relaxed) == count)
    }
}

extension DedicatedThreadExecutorTests {
    @Test("work from several threads runs in the order each thread enqueued it, and only the holding thread reads as current")
    func arrivalOrderPerProducerAndIsCurrent() async {
        let executor = DedicatedThreadExecutor()
        defer { executor.shutdown() }
        let seen = Mutex<[Int: [Int]]>([:])
        let notCurrentInside = Atomic(0)
        let producers = 4
        let perProducer = 500
        let finished = Atomic(0)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for producer in 0..<producers {
                DispatchQueue.global().async {
                    for index in 0..<perProducer {
                        executor.perform {
                            if !executor.isCurrent { _ = notCurrentInside.add(1, ordering: .relaxed) }
                            seen.withLock { $0[producer, default: []].append(index) }
                            if finished.add(1, ordering: .relaxed).newValue == producers * perProducer { done.resume() }
                        }
                    }
                }
            }
        }
        #expect(!executor.isCurrent, "a thread that does not hold the executor never reads as current")
        #expect(notCurrentInside.load(ordering: .relaxed) == 0)
        let orders = seen.withLock { $0 }
        for producer in 0..<producers { #expect(orders[producer] == Array(0..<perProducer)) }
    }

    @Test("work queued before shutdown still runs, all of it, after shutdown is called")
    func shutdownRunsQueuedWork() async {
        let executor = DedicatedThreadExecutor()
        let ran = Atomic(0)
        let gate = DispatchSemaphore(value: 0)
        let count = 300
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            // The first piece holds the thread until shutdown has been called,
            // so everything behind it is still queued then.
            executor.perform { gate.wait() }
            for _ in 0..<count {
                executor.perform {
                    if ran.add(1, ordering: .relaxed).newValue == count { done.resume() }
                }
            }
            executor.shutdown()
            gate.signal()
        }
        #expect(ran.load(ordering: .relaxed) == count)
    }
}

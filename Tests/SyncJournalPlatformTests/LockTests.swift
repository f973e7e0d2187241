import SyncJournalPlatform
import Testing

@Suite("Mutex and Atomic")
struct LockTests {
    @Test("Concurrent increments under the mutex and of the atomic are all counted")
    func concurrentIncrements() async {
        let counter = Mutex(0)
        let atomic = Atomic<Int>(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<1_000 {
                        counter.withLock { $0 += 1 }
                        atomic.add(1, ordering: .relaxed)
                    }
                }
            }
        }
        #expect(counter.withLock { $0 } == 8_000)
        #expect(atomic.load(ordering: .relaxed) == 8_000)
        #expect(atomic.exchange(3, ordering: .relaxed) == 8_000)
        #expect(atomic.load(ordering: .relaxed) == 3)
    }

    @Test("A typed error thrown inside withLock comes out unchanged")
    func typedThrows() {
        let mutex = Mutex([1, 2])
        #expect(throws: Errno.ioError) {
            try mutex.withLock { (_: inout [Int]) throws(Errno) in throw .ioError }
        }
    }
}

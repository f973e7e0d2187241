import SyncJournalCore
import Testing

/// The group-commit rule, without a file: each rule of ``CommitQueue``'s
/// documentation has a test here.
@Suite("Commit queue: who learns of durability, and when")
struct CommitQueueTests {
    @Test("rule 1: a barrier releases only the batches that end at or before the end it read, never a batch written after it")
    func barrierReleasesOnlyWhatItCovers() {
        var queue = CommitQueue<String>()
        queue.wrote(end: 100, waiters: ["a"])
        let step1 = queue.barrierStarting()
        #expect(step1)
        // Written while the barrier runs, after it read the end (100).
        queue.wrote(end: 180, waiters: ["b"])
        let ended = queue.barrierEnded(durableThrough: 100)
        #expect(ended.released == ["a"])
        #expect(ended.stillWaiting, "b waits for a barrier of its own")
        #expect(queue.waiters == ["b"])
    }

    @Test("rule 1: a batch written before the barrier read the file's end is released by it, even if the queue learned of it after the start")
    func barrierCoversEverythingWrittenBeforeItRead() {
        var queue = CommitQueue<String>()
        queue.wrote(end: 100, waiters: ["a"])
        let step2 = queue.barrierStarting()
        #expect(step2)
        queue.wrote(end: 150, waiters: ["b"])
        // The barrier read the end after b was written: it covers both.
        let ended = queue.barrierEnded(durableThrough: 150)
        #expect(ended.released == ["a", "b"])
        #expect(!ended.stillWaiting)
        #expect(queue.isIdle)
    }

    @Test("rule 2: waiters are released in the order their batches were written, and a follower of a batch is released with it, not before")
    func releasedInWriteOrderWithFollowers() {
        var queue = CommitQueue<String>()
        queue.wrote(end: 10, waiters: ["a1", "a2"])
        let step3 = queue.follow(["refused after a"])
        #expect(step3)
        queue.wrote(end: 20, waiters: ["b"])
        let step4 = queue.follow(["nothing to write after b"])
        #expect(step4)
        let step5 = queue.barrierStarting()
        #expect(step5)
        let first = queue.barrierEnded(durableThrough: 10)
        #expect(first.released == ["a1", "a2", "refused after a"])
        let step6 = queue.barrierStarting()
        #expect(step6)
        let second = queue.barrierEnded(durableThrough: 20)
        #expect(second.released == ["b", "nothing to write after b"])
    }

    @Test("rule 2: a waiter that wrote nothing, with nothing written before it, is answered at once")
    func followerWithNothingWrittenIsAnsweredAtOnce() {
        var queue = CommitQueue<String>()
        let step7 = queue.follow(["x"])
        #expect(!step7)
        #expect(queue.isIdle)
    }

    @Test("rule 3: no second barrier starts while one runs; the end of one with batches still waiting lets the next start")
    func oneBarrierAtATime() {
        var queue = CommitQueue<Int>()
        let step8 = queue.barrierStarting()
        #expect(!step8, "nothing written: no barrier")
        queue.wrote(end: 1, waiters: [1])
        let step9 = queue.barrierStarting()
        #expect(step9)
        queue.wrote(end: 2, waiters: [2])
        let step10 = queue.barrierStarting()
        #expect(!step10, "one runs already")
        #expect(queue.barrierRunning)
        let ended = queue.barrierEnded(durableThrough: 1)
        #expect(ended.stillWaiting)
        #expect(!queue.barrierRunning)
        let step11 = queue.barrierStarting()
        #expect(step11)
        let step12 = queue.barrierEnded(durableThrough: 2).released
        #expect(step12 == [2])
        let step13 = queue.barrierStarting()
        #expect(!step13, "nothing left to cover")
    }

    @Test("rule 3: a barrier an owner runs to make room releases what it covers and leaves the running barrier running")
    func ownersBarrierLeavesTheRunningOne() {
        var queue = CommitQueue<Int>()
        queue.wrote(end: 1, waiters: [1])
        let step14 = queue.barrierStarting()
        #expect(step14)
        queue.wrote(end: 2, waiters: [2])
        let step15 = queue.released(durableThrough: 2)
        #expect(step15 == [1, 2])
        #expect(queue.barrierRunning, "the queue's barrier still runs")
        let step16 = queue.barrierEnded(durableThrough: 1).released.isEmpty
        #expect(step16, "its waiters were released already, once")
    }

    @Test("rule 4: after a failed barrier every waiter, written or following, is handed back, and no barrier starts again")
    func failedBarrierIsFinal() {
        var queue = CommitQueue<String>()
        queue.wrote(end: 10, waiters: ["a"])
        let step17 = queue.barrierStarting()
        #expect(step17)
        queue.wrote(end: 20, waiters: ["b"])
        let step18 = queue.follow(["c"])
        #expect(step18)
        let step19 = queue.barrierFailed()
        #expect(step19 == ["a", "b", "c"])
        #expect(queue.failed)
        let taken = queue.wrote(end: 30, waiters: ["d"])
        #expect(!taken, "a batch written after the failure is handed back to its writer at once")
        let step20 = queue.barrierStarting()
        #expect(!step20, "a failed barrier is never followed by one that could report success")
        #expect(queue.takeAll().isEmpty, "no waiter is left behind for a barrier that will never run")
    }

    @Test("over 2,000 random schedules, every waiter is released exactly once, in write order, and only by a barrier whose end covers its batch")
    func randomSchedulesReleaseEachWaiterOnceInOrder() {
        var generator = SeededGenerator(seed: 20_261_204)
        for _ in 0..<2_000 {
            var queue = CommitQueue<Int>()
            var fileEnd: Int64 = 0
            var endOfWaiter: [Int: Int64] = [:]
            var released: [Int] = []
            var next = 0
            var barrierRead: Int64?
            for _ in 0..<40 {
                switch Int.random(in: 0..<5, using: &generator) {
                case 0, 1:
                    fileEnd += Int64.random(in: 1...100, using: &generator)
                    let count = Int.random(in: 1...3, using: &generator)
                    let waiters = Array(next..<next + count)
                    next += count
                    for waiter in waiters { endOfWaiter[waiter] = fileEnd }
                    queue.wrote(end: fileEnd, waiters: waiters)
                case 2:
                    if queue.follow([next]) {
                        endOfWaiter[next] = fileEnd
                        next += 1
                    }
                case 3:
                    if barrierRead == nil, queue.barrierStarting() {
                        // The barrier reads the file's end when it runs.
                        barrierRead = fileEnd
                    }
                default:
                    if let read = barrierRead {
                        let ended = queue.barrierEnded(durableThrough: read)
                        for waiter in ended.released { #expect(endOfWaiter[waiter]! <= read) }
                        released += ended.released
                        barrierRead = nil
                    }
                }
            }
            if let read = barrierRead { released += queue.barrierEnded(durableThrough: read).released }
            while queue.barrierStarting() { released += queue.barrierEnded(durableThrough: fileEnd).released }
            #expect(queue.isIdle)
            #expect(released == Array(0..<next), "each waiter once, in the order written")
        }
    }
}

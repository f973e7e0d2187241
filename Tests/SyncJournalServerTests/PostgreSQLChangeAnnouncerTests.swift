import Dispatch
import SyncJournalPlatform
@testable import SyncJournalServer
import Testing

/// The change notifications of committed pushes, sent in rounds: what
/// commits during a round goes out in the next, one notification per user.
@Suite("PostgreSQL change announcer")
struct PostgreSQLChangeAnnouncerTests {
    /// A `send` that records each round and can hold one until released.
    final class RecordingSender: Sendable {
        private let rounds = Mutex<[[String]]>([])
        private let holding = Mutex(false)
        private let entered = DispatchSemaphore(value: 0)
        private let release = DispatchSemaphore(value: 0)
        private let roundSent = DispatchSemaphore(value: 0)
        private let failures = Mutex(0)

        /// Holds the next round inside `send` until ``releaseRound()``.
        func holdNextRound() { holding.withLock { $0 = true } }
        /// Makes the next `count` attempts fail.
        func failNext(_ count: Int) { failures.withLock { $0 = count } }
        /// Waits until a held round is inside `send`.
        func waitUntilHeld() { entered.wait() }
        func releaseRound() { release.signal() }
        /// Waits until `count` rounds more have been sent (attempts that failed are not rounds).
        func waitForRounds(_ count: Int) { for _ in 0..<count { roundSent.wait() } }
        var sent: [[String]] { rounds.withLock { $0 } }

        func send(_ payloads: [String]) throws(PostgreSQLError) {
            if holding.withLock({ held in defer { held = false }; return held }) {
                entered.signal()
                release.wait()
            }
            let fails = failures.withLock { count -> Bool in
                defer { count = max(0, count - 1) }
                return count > 0
            }
            if fails { throw PostgreSQLError(sqlState: nil, message: "connection lost", context: "notify", connection: "test", connectionLost: true) }
            rounds.withLock { $0.append(payloads.sorted()) }
            roundSent.signal()
        }
    }

    /// An announcer whose rounds go to a recording sender, with no pause between rounds.
    private static func announcer() -> (RecordingSender, PostgreSQLChangeAnnouncer) {
        let sender = RecordingSender()
        return (sender, PostgreSQLChangeAnnouncer(minimumRoundInterval: 0) { payloads throws(PostgreSQLError) in try sender.send(payloads) })
    }

    private static func payload(_ user: String, _ kinds: Set<String>) -> String {
        PostgreSQLChangeNotice.payload(user: user, kinds: kinds)
    }

    @Test("changes committed while a round is under way go out together in the next round, one notification per user with its kinds merged")
    func gathersDuringARound() {
        let (sender, announcer) = Self.announcer()
        defer { announcer.stop() }
        sender.holdNextRound()
        announcer.announce(user: "u1", kinds: ["pin"])
        sender.waitUntilHeld()
        announcer.announce(user: "u1", kinds: ["card"])
        announcer.announce(user: "u2", kinds: ["pin"])
        announcer.announce(user: "u1", kinds: ["pin"])
        sender.releaseRound()
        sender.waitForRounds(2)
        #expect(sender.sent == [[Self.payload("u1", ["pin"])],
                                [Self.payload("u1", ["card", "pin"]), Self.payload("u2", ["pin"])].sorted()])
    }

    @Test("a change of unknown kinds stays a change of any kind when merged with known ones")
    func anyKindStaysAny() {
        let (sender, announcer) = Self.announcer()
        defer { announcer.stop() }
        sender.holdNextRound()
        announcer.announce(user: "u0", kinds: ["pin"])
        sender.waitUntilHeld()
        announcer.announce(user: "u1", kinds: ["pin"])
        announcer.announce(user: "u1", kinds: [])
        announcer.announce(user: "u1", kinds: ["card"])
        sender.releaseRound()
        sender.waitForRounds(2)
        #expect(sender.sent.last == [Self.payload("u1", [])])
    }

    @Test("a round that fails is sent once more, and a round that fails twice is dropped without stopping later ones")
    func failedRoundIsRetriedOnce() {
        let (sender, announcer) = Self.announcer()
        defer { announcer.stop() }
        sender.failNext(1)
        announcer.announce(user: "u1", kinds: ["pin"])
        sender.waitForRounds(1)
        #expect(sender.sent == [[Self.payload("u1", ["pin"])]])
        sender.holdNextRound()
        sender.failNext(2)
        announcer.announce(user: "u2", kinds: ["pin"])
        sender.waitUntilHeld()
        announcer.announce(user: "u3", kinds: ["pin"])
        sender.releaseRound()
        sender.waitForRounds(1)
        #expect(sender.sent.last == [Self.payload("u3", ["pin"])], "u2's round failed twice and was dropped; u3's went out")
    }

    @Test("flush returns once the changes queued before it went out, including those waiting behind a round under way")
    func flushWaitsForQueuedRounds() {
        let (sender, announcer) = Self.announcer()
        defer { announcer.stop() }
        #expect(announcer.flush(), "nothing queued: at once")
        sender.holdNextRound()
        announcer.announce(user: "u1", kinds: ["pin"])
        sender.waitUntilHeld()
        announcer.announce(user: "u2", kinds: ["pin"])
        let flushed = Mutex<(Bool, Int)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let flusher = PlatformThread.start {
            let sent = announcer.flush(timeoutMilliseconds: 120_000)
            flushed.withLock { $0 = (sent, sender.sent.count) }
            done.signal()
        }
        sender.releaseRound()
        done.wait()
        flusher?.join()
        #expect(flushed.withLock { $0 }.map { $0.0 && $0.1 == 2 } == true, "flush returned after both rounds: \(String(describing: flushed.withLock { $0 }))")
        #expect(announcer.flush(), "nothing left: at once")
    }

    @Test("stop sends what is queued before the thread ends, and later changes are dropped")
    func stopFlushes() {
        let (sender, announcer) = Self.announcer()
        sender.holdNextRound()
        announcer.announce(user: "u1", kinds: ["pin"])
        sender.waitUntilHeld()
        announcer.announce(user: "u2", kinds: ["pin"])
        let stopped = DispatchSemaphore(value: 0)
        let stopper = PlatformThread.start {
            announcer.stop()
            stopped.signal()
        }
        sender.releaseRound()
        stopped.wait()
        stopper?.join()
        #expect(sender.sent == [[Self.payload("u1", ["pin"])], [Self.payload("u2", ["pin"])]])
        announcer.announce(user: "u3", kinds: ["pin"])
        #expect(sender.sent.count == 2)
    }
}

import Foundation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// Live sync on a virtual clock: idle pulls, pulls when the app becomes
/// active or the server announces changes, the wait for changes kept open
/// (replaced when lost or hung), and the pause after refused credentials.
// The limit catches a hang; virtual time makes the tests themselves take well under a second,
// but a full `swift test` on a loaded 2-core machine once kept one past a minute.
@Suite("Live sync: idle pulls, change waits, credentials", .timeLimit(.minutes(5)))
struct LiveSyncTests {
    // MARK: Idle pulls

    @Test("an idle engine pulls at start and then once per interval, one request each, and sees another device's edit at the next pull")
    func idlePullsAtTheInterval() async throws {
        let dir = try TemporaryDirectory(prefix: "live-sync-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await LiveRig.open(dir.file("device.journal"), server: server, idlePullInterval: .seconds(30))
        #expect(await rig.engine.nextAttemptAtMilliseconds == 0, "a pull is due at start")
        await rig.clock.advance(byMilliseconds: 0)
        #expect(await rig.log.pullTimes == [0])

        await server.write(user: "u1", kind: "pin", id: "p9", fields: ["name": .string("From the tablet")])
        await rig.clock.advance(toMilliseconds: 29_999)
        #expect(try await rig.store.record("pin", id: "p9") == nil, "not before the interval")
        await rig.clock.advance(toMilliseconds: 30_000)
        #expect(try await rig.store.record("pin", id: "p9")?.fields["name"] == .string("From the tablet"))
        await rig.clock.advance(toMilliseconds: 90_000)
        #expect(await rig.log.pullTimes == [0, 30_000, 60_000, 90_000], "one request per idle pull")
        #expect(await rig.log.requests.count == 4, "no push when nothing is pending")
    }

    @Test("an idle pull never runs while a push is open: the interval passing during a held push brings no pull, and the next idle pull is one interval after that sync")
    func idlePullNeverDuringPush() async throws {
        let dir = try TemporaryDirectory(prefix: "live-sync-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await LiveRig.open(dir.file("device.journal"), server: server, idlePullInterval: .seconds(30))
        await rig.clock.advance(byMilliseconds: 0)
        try await rig.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        await rig.faulty.holdNextRequest(.push)
        let syncing = Task { await rig.engine.sync() }
        await rig.faulty.waitUntilHeld()
        await rig.clock.advance(byMilliseconds: 120_000)
        #expect(await rig.log.pullTimes == [0], "no pull while the push is held")
        await rig.faulty.releaseHeld()
        guard case .ok(pushed: 1, _, _) = await syncing.value else { Issue.record("the push did not succeed"); return }
        #expect(await rig.log.pullTimes == [0, 120_000], "the sync's own pull follows its push")
        #expect(await rig.log.pullsDuringPush == 0)
        await rig.clock.advance(toMilliseconds: 150_000)
        #expect(await rig.log.pullTimes == [0, 120_000, 150_000])
    }

    @Test("appDidBecomeActive pulls at once; while the app reports offline it pulls nothing")
    func appDidBecomeActivePullsAtOnce() async throws {
        let dir = try TemporaryDirectory(prefix: "live-sync-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await LiveRig.open(dir.file("device.journal"), server: server)
        await server.write(user: "u1", kind: "pin", id: "p9", fields: ["name": .string("Tapas bar")])
        await rig.engine.setOnline(false)
        #expect(await rig.engine.appDidBecomeActive() == nil)
        #expect(await rig.log.requests.isEmpty)

        await rig.engine.setOnline(true)
        #expect(await rig.engine.appDidBecomeActive() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(try await rig.store.record("pin", id: "p9") != nil)
        #expect(await rig.log.pullTimes == [0], "one request, at once")
    }

    // MARK: Waits for changes

    @Test("a change announced through the wait wakes a pull, another user's change does not, and a new wait opens after the pull")
    func notificationWakesAPull() async throws {
        let dir = try TemporaryDirectory(prefix: "live-sync-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await LiveRig.open(dir.file("device.journal"), server: server, changeWaitTimeout: .seconds(60))
        #expect(await rig.engine.changeWaitsOpened == 1)
        await server.write(user: "u2", kind: "pin", id: "other", fields: [:])
        await server.write(user: "u1", kind: "pin", id: "p9", fields: ["name": .string("From the phone")])
        await rig.engine.untilChangeWaitsEnded(1)
        #expect(try await rig.store.record("pin", id: "p9")?.fields["name"] == .string("From the phone"))
        #expect(try await rig.store.record("pin", id: "other") == nil)
        #expect(await rig.log.pullTimes == [0], "one pull, at once, without the clock moving")
        #expect(await rig.engine.changeWaitsOpened == 2)
        #expect(await rig.engine.isWaitingForChanges)
    }

    @Test("a lost wait is opened again after a backoff on the virtual clock, and the new one still wakes a pull")
    func lostWaitReconnects() async throws {
        let dir = try TemporaryDirectory(prefix: "live-sync-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let clock = ManualClock()
        let faultyFirst = try await LiveRig.open(dir.file("device.journal"), server: server, clock: clock,
                                                 changeWaitTimeout: .seconds(60), start: false)
        await faultyFirst.faulty.inject(.transient(reason: "connection reset", retryAfter: nil), on: .changeWait)
        await faultyFirst.engine.start()
        let rig = faultyFirst
        await rig.engine.untilChangeWaitsEnded(1)
        #expect(await rig.engine.isReconnectingChangeWait)
        #expect(await rig.engine.changeWaitsOpened == 1)
        let reconnect = try #require(clock.nextDeadlineMilliseconds)
        #expect(reconnect > 0 && reconnect <= 1_000, "within the first backoff")
        await clock.advance(toMilliseconds: reconnect)
        #expect(await rig.engine.changeWaitsOpened == 2)
        await server.write(user: "u1", kind: "pin", id: "p9", fields: [:])
        await rig.engine.untilChangeWaitsEnded(2)
        #expect(try await rig.store.record("pin", id: "p9") != nil)
    }

    @Test("a wait that fails because the server stopped answering marks the status unreachable at once, with no clock advance, then reopens after the first backoff")
    func deadServerDuringWaitShowsUnreachableAtOnce() async throws {
        let dir = try TemporaryDirectory(prefix: "live-sync-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let waits = WaitHoldingTransport(server.transport(user: "u1"))
        let rig = try await LiveRig.open(dir.file("device.journal"), server: server, changeWaitTimeout: .seconds(60), base: waits)
        #expect(await rig.engine.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        await waits.untilWaitHeld()
        var updates = await rig.engine.statusUpdates().makeAsyncIterator()
        #expect(await updates.next()?.connectivity == .online)
        let before = rig.clock.elapsedMilliseconds

        await waits.endHeldWait(.failure(.serverUnreachable(reason: "connection refused")))
        await rig.engine.untilChangeWaitsEnded(1)
        let unreachable = SyncStatus.Connectivity.serverUnreachable(reason: "server unreachable: connection refused")
        #expect(rig.clock.elapsedMilliseconds == before, "no time passed")
        #expect(await rig.engine.status.connectivity == unreachable, "the same reading as a pull that found the server down")
        #expect(await nextStatus(&updates) { $0.connectivity == unreachable } != nil, "told to listeners too")
        #expect(await rig.engine.isReconnectingChangeWait)
        let reconnect = try #require(rig.clock.nextDeadlineMilliseconds)
        #expect(reconnect > before && reconnect <= before + 1_000, "within the first backoff")
        await rig.clock.advance(toMilliseconds: reconnect)
        #expect(await rig.engine.changeWaitsOpened == 2)
        await waits.releaseAll()
        await rig.engine.stop()
    }

    @Test("after a failed wait marked the server unreachable, the next wait the server holds to its end brings one pull, and the status reads online again")
    func heldWaitAfterDeadServerPullsAndShowsOnline() async throws {
        let dir = try TemporaryDirectory(prefix: "live-sync-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let waits = WaitHoldingTransport(server.transport(user: "u1"))
        let rig = try await LiveRig.open(dir.file("device.journal"), server: server, changeWaitTimeout: .seconds(60), base: waits)
        await waits.untilWaitHeld()
        await waits.endHeldWait(.failure(.serverUnreachable(reason: "connection refused")))
        await rig.engine.untilChangeWaitsEnded(1)
        #expect(await rig.engine.status.connectivity == .serverUnreachable(reason: "server unreachable: connection refused"))
        let reconnect = try #require(rig.clock.nextDeadlineMilliseconds)
        await rig.clock.advance(toMilliseconds: reconnect)
        await waits.untilWaitHeld()
        let pullsBefore = await rig.log.pullTimes.count

        // The server is back and holds the wait for its whole minute.
        await rig.clock.advance(toMilliseconds: reconnect + 60_000)
        await waits.endHeldWait(.success(.timedOut))
        await rig.engine.untilChangeWaitsEnded(2)
        #expect(await rig.log.pullTimes.count == pullsBefore + 1, "one pull puts the status right")
        #expect(await rig.engine.status.connectivity == .online)
        #expect(await rig.engine.changeWaitsOpened == 3, "and the wait is open again")
        await waits.releaseAll()
        await rig.engine.stop()
    }

    @Test("a hung wait (no answer, no failure) is cancelled and replaced at its timeout plus the margin, not before")
    func hungWaitIsReplaced() async throws {
        let dir = try TemporaryDirectory(prefix: "live-sync-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await LiveRig.open(dir.file("device.journal"), server: server, changeWaitTimeout: .seconds(60), start: false)
        await rig.faulty.inject(.hold, on: .changeWait)
        await rig.engine.start()
        await rig.faulty.waitUntilHeld()
        await rig.clock.advance(toMilliseconds: 69_999)
        #expect(await rig.engine.changeWaitsOpened == 1)
        await rig.clock.advance(toMilliseconds: 70_000)
        #expect(await rig.engine.changeWaitsOpened == 2, "replaced after 60 s plus the 10 s margin")
        await server.write(user: "u1", kind: "pin", id: "p9", fields: [:])
        await rig.engine.untilChangeWaitsEnded(2)
        #expect(try await rig.store.record("pin", id: "p9") != nil, "the replacement wakes the pull")
        await rig.faulty.releaseHeld()
    }

    @Test("going offline and stopping close the wait; coming online reopens it; a retired store opens none")
    func waitFollowsConnectivityAndLifecycle() async throws {
        let dir = try TemporaryDirectory(prefix: "live-sync-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await LiveRig.open(dir.file("device.journal"), server: server, changeWaitTimeout: .seconds(60))
        #expect(await rig.engine.isWaitingForChanges)
        await rig.engine.setOnline(false)
        #expect(await !rig.engine.isWaitingForChanges)
        await rig.engine.setOnline(true)
        #expect(await rig.engine.isWaitingForChanges)
        #expect(await rig.engine.changeWaitsOpened == 2)
        await rig.engine.stop()
        #expect(await !rig.engine.isWaitingForChanges)
        await rig.engine.start()
        #expect(await rig.engine.changeWaitsOpened == 3)
        await rig.store.retire()
        _ = await rig.engine.appDidBecomeActive()
        #expect(await !rig.engine.isWaitingForChanges)
        await rig.engine.setOnline(true)
        #expect(await rig.engine.changeWaitsOpened == 3, "no wait for a retired store")
    }

    // MARK: Credentials

    @Test("refused credentials pause sync without charging any operation; nothing is tried until the app signs in again, then everything goes")
    func refusedCredentialsPause() async throws {
        let dir = try TemporaryDirectory(prefix: "live-sync-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await LiveRig.open(dir.file("device.journal"), server: server, idlePullInterval: .seconds(30))
        await rig.clock.advance(byMilliseconds: 0)
        await rig.faulty.inject(.unauthorized(reason: "HTTP 401 from /v1/sync/push"), on: .push)
        try await rig.store.create("pin", id: "p1", fields: [:])
        await rig.clock.advance(byMilliseconds: LiveRig.coalescing)
        #expect(await rig.engine.isWaitingForAuthentication)
        let entry = try #require(try await rig.engine.outboxStatus().first)
        #expect(entry.attempts == 0 && entry.permanentFailures == 0 && entry.state != .quarantined, "no operation charged")
        let requests = await rig.log.requests.count

        try await rig.store.create("pin", id: "p2", fields: [:])
        await rig.clock.advance(byMilliseconds: 3_600_000)
        #expect(await rig.log.requests.count == requests, "no push, no idle pull while paused")
        #expect(await rig.engine.nextAttemptAtMilliseconds == nil)

        guard case .ok(pushed: 2, _, _) = await rig.engine.resumeAfterAuthentication() else { Issue.record("no sync after sign-in"); return }
        #expect(await !rig.engine.isWaitingForAuthentication)
        #expect(await server.rows(user: "u1", kind: "pin").map(\.id) == ["p1", "p2"])
    }

    @Test("a sync started by hand after refused credentials resumes scheduling when it gets past the server")
    func explicitSyncResumes() async throws {
        let dir = try TemporaryDirectory(prefix: "live-sync-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let rig = try await LiveRig.open(dir.file("device.journal"), server: server)
        await rig.faulty.inject(.unauthorized(reason: "HTTP 401"), on: .pull)
        #expect(await rig.engine.sync() == .failed(.authentication(reason: "HTTP 401")))
        #expect(await rig.engine.isWaitingForAuthentication)
        #expect(await rig.engine.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(await !rig.engine.isWaitingForAuthentication)
        try await rig.store.create("pin", id: "p1", fields: [:])
        await rig.clock.advance(byMilliseconds: LiveRig.coalescing)
        #expect(await server.row(kind: "pin", id: "p1") != nil, "edits are scheduled again")
    }

    @Test("an account switch: the old store is stopped, its pending operations listed and kept in its journal, and none of them ever reaches the new user's transport")
    func accountSwitchNeverSendsOldOperations() async throws {
        let dir = try TemporaryDirectory(prefix: "live-sync-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let alice = try await LiveRig.open(dir.file("alice.journal"), server: server, user: "alice", online: false)
        try await alice.store.create("pin", id: "a1", fields: ["name": .string("Alice's")])
        try await alice.store.create("pin", id: "a2", fields: [:])

        // The recipe: stop the engine, list what was not sent, retire the store.
        await alice.engine.stop()
        let leftBehind = try await alice.engine.outboxStatus()
        #expect(leftBehind.map(\.operation.recordID) == ["a1", "a2"])
        await alice.store.retire()
        #expect(await alice.engine.sync() == .failed(.store(.retired)))

        let bob = try await LiveRig.open(dir.file("bob.journal"), server: server, user: "bob", clock: alice.clock,
                                         idlePullInterval: .seconds(30), changeWaitTimeout: .seconds(60))
        try await bob.store.create("pin", id: "b1", fields: [:])
        await bob.clock.advance(byMilliseconds: 60_000)
        _ = await bob.engine.appDidBecomeActive()
        let oldIDs = Set(leftBehind.map(\.id))
        #expect(Set(await bob.log.pushedOperations).isDisjoint(with: oldIDs))
        #expect(await alice.log.pushedOperations.isEmpty)
        #expect(await server.rows(user: "bob", kind: "pin").map(\.id) == ["b1"])
        #expect(await server.row(kind: "pin", id: "a1") == nil)

        // Alice's work is still in her journal for when she signs in again.
        let reopened = try await LocalStore.open(path: dir.file("alice.journal"))
        #expect(try await reopened.outboxStatus().map(\.id) == leftBehind.map(\.id))
        try await reopened.close()
        await bob.engine.stop()
    }
}

import Foundation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// Failures end to end with the engine's own scheduler on a virtual clock:
/// "not now" is not "no", no poison pill, a too-large batch splits.
@Suite("Failures end to end: 503 storms, poison pills, quarantine, too-large batches")
struct FailureHandlingTests {
    static let policy = RetryPolicy(baseDelay: .milliseconds(1_000), maximumDelay: .milliseconds(30_000), editCoalescing: .milliseconds(500))

    // MARK: A 503 storm

    @Test("a storm of 20 failed pushes (503, with or without retry-after) then recovery: every edit reaches the server exactly once, nothing is quarantined or charged, attempts count up, the backoff resets",
          arguments: [nil, 2_000] as [Int64?])
    func stormThenRecoveryLosesNothing(retryAfter: Int64?) async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        var settings = FailureRig.Settings()
        settings.retryPolicy = Self.policy
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server, settings: settings)
        await rig.faulty.inject(.transient(reason: "503 service unavailable", retryAfter: retryAfter.map { .milliseconds($0) }), on: .push, times: 20)
        for index in 0..<5 { try await rig.store.create("pin", id: "p\(index)", fields: ["n": .int(Int64(index))]) }

        var failures = 0
        while await rig.faulty.pendingFaults > 0 {
            try #require(failures < 20, "more attempts than injected faults")
            try await rig.expectAttemptScheduled()
            let backoffUntil = await rig.engine.scheduleState.backoffUntil
            let next = try #require(await rig.engine.nextAttemptAtMilliseconds)
            if let backoffUntil { #expect(next >= backoffUntil) }
            await rig.clock.advance(toMilliseconds: next)
            failures += 1
            #expect(await rig.engine.syncsStarted == failures, "one attempt per scheduled time, no storm")
            #expect(await rig.engine.scheduleState.consecutiveFailures == failures)
            if let retryAfter {
                #expect(try #require(await rig.engine.nextAttemptAtMilliseconds) >= rig.clock.elapsedMilliseconds + retryAfter, "the retry-after is honoured")
            }
            for entry in try await rig.store.outboxOperations() {
                #expect(entry.permanentFailures == 0 && !entry.quarantined, "a 503 never uses an operation's budget")
            }
            // Those that went out (the first of each record) carry the 503.
            for entry in try await rig.sendableOperations() {
                #expect(entry.lastFailure == .transient)
                #expect(entry.lastError == "503 service unavailable")
            }
            // Attempts count up: p0 was in every failed push.
            #expect(try await rig.store.pendingOperations(kind: "pin", id: "p0").first?.attempts == failures)
            if failures == 10 {
                // Edits in the middle of the storm: one more record, and an
                // update queued behind p0's create (which may have reached the server).
                try await rig.store.create("pin", id: "p5", fields: ["n": .int(5)])
                try await rig.store.update("pin", id: "p0", changes: ["n": .int(100)])
                #expect(try await rig.store.pendingOperations(kind: "pin", id: "p0").count == 2)
            }
        }
        #expect(failures == 20)
        #expect(try await rig.store.pendingOperations(kind: "pin", id: "p5").first?.attempts == 10)
        #expect(await server.appliedMutations == 0, "nothing reached the server during the storm")

        // Recovery: the next scheduled attempt succeeds.
        try #require(await rig.advanceToNextAttempt())
        #expect(await rig.engine.syncsStarted == 21, "20 failed attempts and the one that succeeded")
        #expect(try await rig.store.outboxOperations().isEmpty)
        #expect(try await rig.store.quarantinedOperations().isEmpty)
        #expect(try await rig.store.conflicts().isEmpty)
        #expect(try await rig.store.rejections().isEmpty)
        #expect(await server.appliedMutations == 7, "6 creates and 1 update, each applied exactly once")
        #expect(await server.rows(user: "u1", kind: "pin").map(\.id) == ["p0", "p1", "p2", "p3", "p4", "p5"])
        #expect(await server.row(kind: "pin", id: "p0")?.fields == ["n": .int(100)])
        for attempt in await rig.log.pushes {
            if let until = attempt.backoffUntil { #expect(attempt.at >= until, "no attempt inside a backoff") }
        }
        if let retryAfter {
            let times = await rig.log.pushTimes
            for (earlier, later) in zip(times.prefix(20), times.dropFirst().prefix(20)) { #expect(later - earlier >= retryAfter) }
        }

        // The backoff reset: nothing is scheduled, and the next edit goes out
        // after the coalescing delay only.
        #expect(await rig.engine.scheduleState.consecutiveFailures == 0)
        #expect(await rig.engine.scheduleState.backoffUntil == nil)
        #expect(await rig.engine.nextAttemptAtMilliseconds == nil)
        try await rig.store.update("pin", id: "p1", changes: ["n": .int(11)])
        #expect(await rig.engine.nextAttemptAtMilliseconds == rig.clock.elapsedMilliseconds + Self.policy.editCoalescingMilliseconds)
        await rig.clock.advance(byMilliseconds: Self.policy.editCoalescingMilliseconds)
        #expect(try await rig.store.outboxOperations().isEmpty)
        #expect(await server.appliedMutations == 8)
    }

    // MARK: No poison pill

    /// A device that has p1 synced (on the server and in its snapshot).
    static func deviceWithSyncedP1(_ dir: TemporaryDirectory, server: ReferenceServer, maximumPermanentFailures: Int)
        async throws -> (FailureRig, ServerRow) {
        var settings = FailureRig.Settings()
        settings.retryPolicy = Self.policy
        settings.maximumPermanentFailures = maximumPermanentFailures
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server, settings: settings)
        try await rig.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        await rig.clock.advance(byMilliseconds: Self.policy.editCoalescingMilliseconds)
        try #require(try await rig.store.outboxOperations().isEmpty)
        return (rig, try #require(await server.row(kind: "pin", id: "p1")))
    }

    @Test("a permanently failing record does not delay another record: that one is acknowledged in the same sync; the failing one is retried on its own backoff, quarantined at the configured limit, the view returns to the server's copy, and later edits of it wait while other records flow")
    func poisonPillDoesNotBlockOtherRecords() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let (rig, serverCopy) = try await Self.deviceWithSyncedP1(dir, server: server, maximumPermanentFailures: 4)
        await server.rejectPermanently(kind: "pin", id: "p1", reason: "422 check constraint")
        let bad = try await rig.store.update("pin", id: "p1", changes: ["name": .string("Bad")]).operation
        try await rig.store.create("pin", id: "p2", fields: ["name": .string("Museum")])
        let syncsBefore = await rig.engine.syncsStarted
        let pushesBefore = await server.pushes

        await rig.clock.advance(byMilliseconds: Self.policy.editCoalescingMilliseconds)
        #expect(await rig.engine.syncsStarted == syncsBefore + 1)
        #expect(await server.pushes == pushesBefore + 1, "both went in one push")
        #expect(await server.row(kind: "pin", id: "p2")?.fields == ["name": .string("Museum")], "p2 synced in the same sync")
        #expect(try await rig.store.outboxOperations().map(\.id) == [bad])
        var entry = try #require(try await rig.entry(bad))
        #expect(entry.permanentFailures == 1 && entry.lastFailure == .permanent && !entry.quarantined)
        #expect(entry.lastError == "422 check constraint")
        #expect(try await rig.store.record("pin", id: "p1")?.fields == ["name": .string("Bad")], "not quarantined yet: the edit still shows")

        // Retried on its own backoff, never sooner, until the budget (4) is spent.
        for failure in 2...4 {
            try await rig.expectAttemptScheduled()
            let status = try #require(try await rig.engine.outboxStatus().first { $0.operation.id == bad })
            let next = try #require(await rig.engine.nextAttemptAtMilliseconds)
            #expect(status.nextAttemptIn == .milliseconds(next - rig.clock.elapsedMilliseconds), "the entry's wait ends at the scheduled attempt")
            let pushes = await server.pushes
            await rig.clock.advance(toMilliseconds: next - 1)
            #expect(await server.pushes == pushes, "not retried before its backoff ends")
            await rig.clock.advance(toMilliseconds: next)
            #expect(await server.pushes == pushes + 1)
            entry = try #require(try await rig.entry(bad))
            #expect(entry.permanentFailures == failure)
            #expect(entry.quarantined == (failure == 4))
        }
        #expect(try await rig.store.quarantinedOperations().map(\.id) == [bad])
        #expect(await rig.store.outcome(of: bad).quarantinedOutboxEntry?.id == bad)
        #expect(try await rig.store.record("pin", id: "p1")?.fields == serverCopy.fields, "the view returns to the server's copy")
        #expect(await server.row(kind: "pin", id: "p1") == serverCopy)
        #expect(await rig.engine.nextAttemptAtMilliseconds == nil, "nothing left that can be sent")

        // A later edit of p1 waits behind the quarantined one; another record flows.
        let later = try await rig.store.update("pin", id: "p1", changes: ["visited": .bool(true)]).operation
        try await rig.store.create("pin", id: "p3", fields: ["name": .string("Park")])
        #expect(try await rig.store.record("pin", id: "p1")?.fields == ["name": .string("Cafe"), "visited": .bool(true)])
        let pushesBeforeP3 = await rig.log.pushes.count
        await rig.clock.advance(byMilliseconds: Self.policy.editCoalescingMilliseconds)
        #expect(await server.row(kind: "pin", id: "p3") != nil)
        let sentSince = await rig.log.pushes.dropFirst(pushesBeforeP3).flatMap(\.operationIDs)
        #expect(!sentSince.contains(bad) && !sentSince.contains(later), "p1's queue waits behind its quarantined operation")
        #expect(try await rig.store.outboxOperations().map(\.id) == [bad, later])
        #expect(await server.row(kind: "pin", id: "p1") == serverCopy)
        #expect(await rig.engine.nextAttemptAtMilliseconds == nil)
        #expect(try await rig.store.conflicts().isEmpty)
    }

    @Test("an operation the app retries from quarantine (after the server's trouble is lifted) keeps its release across a restart and is then acknowledged with the edits queued behind it")
    func retriedQuarantineSurvivesReopenAndSucceeds() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let (rig, _) = try await Self.deviceWithSyncedP1(dir, server: server, maximumPermanentFailures: 2)
        await server.rejectPermanently(kind: "pin", id: "p1")
        let bad = try await rig.store.update("pin", id: "p1", changes: ["name": .string("Mine")]).operation
        for _ in 1...2 { try #require(await rig.advanceToNextAttempt()) }
        try #require(try await rig.entry(bad)?.quarantined == true)
        let later = try await rig.store.update("pin", id: "p1", changes: ["visited": .bool(true)]).operation

        await server.clearFailures(kind: "pin", id: "p1")
        try await rig.store.retryQuarantined(bad)
        let released = try #require(try await rig.entry(bad))
        #expect(!released.quarantined && released.permanentFailures == 0, "a fresh budget")

        let reopened = try await rig.reopen()
        let afterReopen = try await reopened.store.outboxOperations()
        #expect(afterReopen.map(\.id) == [bad, later])
        #expect(afterReopen.first.map { !$0.quarantined && $0.permanentFailures == 0 && $0.sent } == true)
        #expect(try await reopened.store.quarantinedOperations().isEmpty)
        #expect(try await reopened.store.record("pin", id: "p1")?.fields
                == ["name": .string("Mine"), "visited": .bool(true)], "released: the edit shows again")
        #expect(await reopened.engine.nextAttemptAtMilliseconds == reopened.clock.elapsedMilliseconds, "queued work is due at once after a start")

        await reopened.clock.advance(byMilliseconds: 0)
        #expect(try await reopened.store.outboxOperations().isEmpty)
        #expect(await server.row(kind: "pin", id: "p1")?.fields == ["name": .string("Mine"), "visited": .bool(true)])
        #expect(try await reopened.store.conflicts().isEmpty)
    }

    @Test("an operation the app retries from quarantine goes out at the next attempt, not after a backoff left over from before")
    func retriedQuarantineIsSentAtTheNextAttempt() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let (rig, _) = try await Self.deviceWithSyncedP1(dir, server: server, maximumPermanentFailures: 3)
        await server.rejectPermanently(kind: "pin", id: "p1")
        let bad = try await rig.store.update("pin", id: "p1", changes: ["name": .string("Mine")]).operation
        for _ in 1...3 { try #require(await rig.advanceToNextAttempt()) }
        try #require(try await rig.entry(bad)?.quarantined == true)

        await server.clearFailures(kind: "pin", id: "p1")
        try await rig.store.retryQuarantined(bad)
        try await rig.expectAttemptScheduled()
        let next = try #require(await rig.engine.nextAttemptAtMilliseconds)
        #expect(next == rig.clock.elapsedMilliseconds + Self.policy.editCoalescingMilliseconds)
        await rig.clock.advance(toMilliseconds: next)
        #expect(try await rig.store.outboxOperations().isEmpty, "the released operation was sent at the next attempt")
        #expect(await server.row(kind: "pin", id: "p1")?.fields == ["name": .string("Mine")])
    }

    @Test("an operation the app discards from quarantine is gone after a restart, never reaches the server, and the edits queued behind it then flow")
    func discardedQuarantineSurvivesReopen() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let (rig, serverCopy) = try await Self.deviceWithSyncedP1(dir, server: server, maximumPermanentFailures: 1)
        await server.rejectPermanently(kind: "pin", id: "p1")
        let bad = try await rig.store.update("pin", id: "p1", changes: ["name": .string("Bad")]).operation
        try #require(await rig.advanceToNextAttempt())
        #expect(try await rig.entry(bad)?.quarantined == true, "a limit of 1: quarantined at the first permanent failure")
        let later = try await rig.store.update("pin", id: "p1", changes: ["visited": .bool(true)]).operation

        // Quarantine itself survives a restart, and nothing of p1 is sent.
        let first = try await rig.reopen()
        #expect(try await first.store.quarantinedOperations().map(\.id) == [bad])
        #expect(try await first.store.outboxOperations().map(\.id) == [bad, later])
        #expect(try await first.store.record("pin", id: "p1")?.fields == ["name": .string("Cafe"), "visited": .bool(true)])
        #expect(await first.engine.nextAttemptAtMilliseconds == nil)

        await server.clearFailures(kind: "pin", id: "p1")
        try await first.store.discardQuarantined(bad)
        #expect(await first.store.outcome(of: bad) == .cancelled)
        let second = try await first.reopen()
        #expect(try await second.store.outboxOperations().map(\.id) == [later])
        #expect(try await second.store.quarantinedOperations().isEmpty)
        #expect(await second.engine.nextAttemptAtMilliseconds == second.clock.elapsedMilliseconds)
        await second.clock.advance(byMilliseconds: 0)
        #expect(try await second.store.outboxOperations().isEmpty)
        #expect(await server.row(kind: "pin", id: "p1")?.fields == serverCopy.fields.merging(["visited": .bool(true)]) { _, new in new },
                "the discarded change never reached the server; the later one did")
        #expect(try await second.store.record("pin", id: "p1")?.fields == ["name": .string("Cafe"), "visited": .bool(true)])
    }

    // MARK: Too large

    @Test("the reference server's transport refuses a push naming one operation id twice as permanent, as sync-server answers 400, and applies none of it")
    func referenceServerRefusesRepeatedOperationIDs() async throws {
        let server = ReferenceServer()
        let transport = server.transport(user: "u1")
        let operation = OperationID.random()
        let create = Mutation(operationID: operation, kind: "pin", op: .create, recordID: "p1", fields: ["n": .int(1)], baseUpdatedAt: nil)
        let other = Mutation(operationID: .random(), kind: "pin", op: .create, recordID: "p2", fields: [:], baseUpdatedAt: nil)
        do {
            _ = try await transport.push([create, other, create])
            Issue.record("a push naming one operation id twice was accepted")
        } catch {
            guard case .permanent(let reason) = error else {
                Issue.record("expected a permanent refusal, got \(error)")
                return
            }
            #expect(reason.contains("\(operation)") && reason.contains("at 0 and 2"), "\(reason)")
        }
        #expect(await server.appliedMutations == 0)
        #expect(await server.rows(user: "u1", kind: "pin").isEmpty)
        #expect(try await transport.push([create, other]).count == 2, "the same operations once each are applied")
    }

    @Test("a batch the server refuses as too large is split: 11 operations with a server limit of 4 all arrive, each once, in pushes of at most 4")
    func tooLargeBatchSplits() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer(maximumBatchSize: 4)
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server)
        for index in 0..<11 { try await rig.store.create("pin", id: "p\(index)", fields: ["n": .int(Int64(index))]) }

        await rig.clock.advance(byMilliseconds: RetryPolicy().editCoalescingMilliseconds)
        #expect(await rig.engine.syncsStarted == 1, "split within one sync")
        #expect(try await rig.store.outboxOperations().isEmpty)
        #expect(await server.refusedTooLarge > 0)
        let sizes = await server.acceptedPushSizes
        #expect(!sizes.isEmpty && sizes.allSatisfy { $0 <= 4 })
        #expect(sizes.reduce(0, +) == 11, "each operation accepted once")
        #expect(await server.appliedMutations == 11)
        #expect(await server.rows(user: "u1", kind: "pin").count == 11)
        #expect(try await rig.store.quarantinedOperations().isEmpty)
        #expect(await rig.engine.scheduleState.consecutiveFailures == 0)
    }

    @Test("a single operation refused as too large is a permanent failure of that operation only: the rest of its batch is applied")
    func singleTooLargeOperationFailsAlone() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        var settings = FailureRig.Settings()
        settings.retryPolicy = Self.policy
        settings.wrap = { ByteLimitedTransport(base: $0, maximumBytes: 5_000) }
        let rig = try await FailureRig.open(dir.file("device.journal"), server: server, settings: settings)
        for index in 0..<3 { try await rig.store.create("pin", id: "small\(index)", fields: ["name": .string("s\(index)")]) }
        let big = try await rig.store.create("pin", id: "big", fields: ["name": .string(String(repeating: "x", count: 6_000))]).id
        for index in 3..<6 { try await rig.store.create("pin", id: "small\(index)", fields: ["name": .string("s\(index)")]) }
        let bigID = try #require(try await rig.store.pendingOperations(kind: "pin", id: big).first).id

        await rig.clock.advance(byMilliseconds: Self.policy.editCoalescingMilliseconds)
        #expect(await server.appliedMutations == 6)
        #expect(await server.rows(user: "u1", kind: "pin").map(\.id) == (0..<6).map { "small\($0)" })
        #expect(try await rig.store.outboxOperations().map(\.id) == [bigID])
        let entry = try #require(try await rig.entry(bigID))
        #expect(entry.permanentFailures == 1 && entry.lastFailure == .permanent && !entry.quarantined)
        #expect(entry.lastError?.contains("too large") == true)

        // Retried on its backoff until the budget (3) is spent, then quarantined.
        for _ in 2...3 { try #require(await rig.advanceToNextAttempt()) }
        #expect(try await rig.store.quarantinedOperations().map(\.id) == [bigID])
        #expect(try await rig.store.record("pin", id: big) == nil, "never on the server: the view drops it")
        #expect(await rig.engine.nextAttemptAtMilliseconds == nil)
        #expect(await server.appliedMutations == 6)
    }
}

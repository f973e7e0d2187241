import Testing
import SyncJournalPlatform
import SyncJournalProtocol
@testable import SyncJournalServer

/// Remembered operation ids forgotten after a retention, on every backend:
/// what pruning deletes, and how a mutation no longer remembered is judged.
@Suite("remembered operation retention")
struct OperationRetentionTests {
    /// Ten seconds: short, so the tests move a hand-set clock past it.
    static let retention = OperationRetention(retentionMilliseconds: 10_000)

    static func queued(_ mutation: Mutation, at queuedAt: Int64?) -> Mutation {
        var mutation = mutation
        mutation.queuedAt = queuedAt
        return mutation
    }

    @Test("pruning forgets exactly the operations remembered longer than the retention ago, at most a batch at a time",
          arguments: StorageBackend.tested)
    func pruningForgetsExactlyThePastRows(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend, operationRetention: Self.retention)
        let start = fixture.clock.now
        for id in ["a", "b", "c"] { _ = try fixture.storage.push(user: "u1", [Self.queued(Mutations.create(id), at: start)]) }
        fixture.clock.set(start + 5_000)
        let young = [Self.queued(Mutations.create("d"), at: start + 5_000), Self.queued(Mutations.create("e"), at: start + 5_000)]
        let youngResults = try fixture.storage.push(user: "u1", young)
        #expect(try fixture.rememberedCount() == 5)

        fixture.clock.set(start + 10_000)
        #expect(try fixture.storage.pruneRememberedOperations(limit: 100) == 0, "exactly the retention old is still kept")
        fixture.clock.set(start + 10_001)
        #expect(try fixture.storage.pruneRememberedOperations(limit: 2) == 2)
        #expect(try fixture.storage.pruneRememberedOperations(limit: 2) == 1)
        #expect(try fixture.storage.pruneRememberedOperations(limit: 2) == 0)
        #expect(try fixture.rememberedCount() == 2, "the two younger ones stay")
        #expect(try fixture.storage.push(user: "u1", young) == youngResults, "and still answer their resend from memory")

        fixture.clock.set(start + 15_001)
        #expect(try fixture.storage.pruneRememberedOperations(limit: 100) == 2)
        #expect(try fixture.rememberedCount() == 0)
    }

    @Test("a storage without a retention forgets nothing, however old its operations", arguments: StorageBackend.tested)
    func noRetentionKeepsEverything(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend)
        _ = try fixture.storage.push(user: "u1", [Mutations.create("a")])
        fixture.clock.set(fixture.clock.now + 1_000 * OperationRetention.dayMilliseconds)
        #expect(try fixture.storage.pruneRememberedOperations(limit: 100) == 0)
        #expect(try fixture.rememberedCount() == 1)
    }

    @Test("a resend inside the retention is answered from memory with its first result, however old its queuedAt",
          arguments: StorageBackend.tested)
    func resendInsideRetentionIsRemembered(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend, operationRetention: Self.retention)
        let start = fixture.clock.now
        let create = Self.queued(Mutations.create("p1"), at: start - 1_000_000)
        let first = try fixture.storage.push(user: "u1", [create])
        let row = try #require(first.first?.outcome.appliedRow)
        let update = Self.queued(Mutations.update("p1", base: row.updatedAt, ["title": .string("u")]), at: start - 1_000_000)
        let updated = try fixture.storage.push(user: "u1", [update])
        fixture.clock.set(start + 9_999)
        #expect(try fixture.storage.pruneRememberedOperations(limit: 100) == 0)
        #expect(try fixture.storage.push(user: "u1", [create]) == first)
        #expect(try fixture.storage.push(user: "u1", [update]) == updated)
        #expect(try fixture.storage.read(user: "u1", kind: "pin", id: "p1") == updated.first?.outcome.appliedRow)
    }

    @Test("after the retention, a resent create is duplicate, a resent update or delete a conflict or its tombstone, nothing applied twice or brought back",
          arguments: StorageBackend.tested)
    func resendAfterRetentionIsNeverAppliedTwice(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend, operationRetention: Self.retention)
        let start = fixture.clock.now
        let storage = fixture.storage
        let createA = Self.queued(Mutations.create("a"), at: start)
        let a = try #require(try storage.push(user: "u1", [createA]).first?.outcome.appliedRow)
        let createB = Self.queued(Mutations.create("b"), at: start)
        let b = try #require(try storage.push(user: "u1", [createB]).first?.outcome.appliedRow)
        let updateB = Self.queued(Mutations.update("b", base: b.updatedAt, ["title": .string("b2")]), at: start)
        let b2 = try #require(try storage.push(user: "u1", [updateB]).first?.outcome.appliedRow)
        let createC = Self.queued(Mutations.create("c"), at: start)
        let c = try #require(try storage.push(user: "u1", [createC]).first?.outcome.appliedRow)
        let deleteC = Self.queued(Mutations.delete("c", base: c.updatedAt), at: start)
        let cTombstone = try #require(try storage.push(user: "u1", [deleteC]).first?.outcome.appliedRow)
        // d is created, then deleted by another device of the user.
        let createD = Self.queued(Mutations.create("d"), at: start)
        let d = try #require(try storage.push(user: "u1", [createD]).first?.outcome.appliedRow)
        _ = try storage.push(user: "u1", [Self.queued(Mutations.delete("d", base: d.updatedAt), at: start)])

        fixture.clock.set(start + 20_000)
        #expect(try storage.pruneRememberedOperations(limit: 100) == 7)
        let resent = try storage.push(user: "u1", [createA, updateB, deleteC, createD])
        #expect(resent.map(\.outcome) == [.duplicate, .conflict(server: b2), .applied(cTombstone), .conflict(server: nil)])
        #expect(try storage.read(user: "u1", kind: "pin", id: "a") == a)
        #expect(try storage.read(user: "u1", kind: "pin", id: "b") == b2, "the update was not applied a second time")
        #expect(try storage.read(user: "u1", kind: "pin", id: "d") == nil, "the deleted record stays deleted")
        let page = try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 100))
        #expect(page.rows.first { $0.id == "c" } == cTombstone, "the tombstone was not written again")
        #expect(try fixture.rememberedCount() == 1, "only the delete's harmless answer was remembered again")
    }

    @Test("a create resent after its id was forgotten is known by the record it created, whatever its queuedAt: duplicate while the record lives, conflict with null once deleted",
          arguments: StorageBackend.tested)
    func forgottenCreateKnownByItsRecord(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend, operationRetention: Self.retention)
        let storage = fixture.storage
        let start = fixture.clock.now
        // A device clock far ahead: by its queuedAt every resend looks recent.
        let ahead = start + 1_000_000
        let createA = Self.queued(Mutations.create("a"), at: ahead)
        let a = try #require(try storage.push(user: "u1", [createA]).first?.outcome.appliedRow)
        let createD = Self.queued(Mutations.create("d"), at: ahead)
        let d = try #require(try storage.push(user: "u1", [createD]).first?.outcome.appliedRow)
        let updateD = Self.queued(Mutations.update("d", base: d.updatedAt, ["title": .string("d2")]), at: ahead)
        let d2 = try #require(try storage.push(user: "u1", [updateD]).first?.outcome.appliedRow)
        _ = try storage.push(user: "u1", [Self.queued(Mutations.delete("d", base: d2.updatedAt), at: ahead)])

        fixture.clock.set(start + 20_000)
        #expect(try storage.pruneRememberedOperations(limit: 100) == 4)
        #expect(!Self.retention.mayBeForgotten(createD, at: fixture.clock.now), "its queuedAt alone would let it re-create d")
        let resent = try storage.push(user: "u1", [createA, createD])
        #expect(resent.map(\.outcome) == [.duplicate, .conflict(server: nil)])
        #expect(try storage.read(user: "u1", kind: "pin", id: "a") == a)
        #expect(try storage.read(user: "u1", kind: "pin", id: "d") == nil, "the deleted record stays deleted")
        // Another create of d, a new operation, is a new record over the tombstone.
        let recreated = try storage.push(user: "u1", [Self.queued(Mutations.create("d"), at: fixture.clock.now)])
        #expect(recreated.first?.outcome.appliedRow != nil, "\(recreated)")
    }

    @Test("an unremembered create is judged by its queuedAt: recent ones re-create over a tombstone, old or undated ones do not",
          arguments: StorageBackend.tested)
    func judgementFollowsQueuedAt(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend, operationRetention: Self.retention)
        let storage = fixture.storage
        let now = fixture.clock.now
        let allowance = Self.retention.clockAllowanceMilliseconds
        for (id, queuedAt, expected) in [("fresh", now, true), ("edge", now - 10_000 + allowance, true),
                                         ("old", now - 10_000 + allowance - 1, false), ("undated", nil, false)] as [(String, Int64?, Bool)] {
            let row = try #require(try storage.push(user: "u1", [Mutations.create(id)]).first?.outcome.appliedRow)
            _ = try storage.push(user: "u1", [Mutations.delete(id, base: row.updatedAt)])
            let outcome = try #require(try storage.push(user: "u1", [Self.queued(Mutations.create(id), at: queuedAt)]).first?.outcome)
            #expect((outcome.appliedRow != nil) == expected, "\(id): \(outcome)")
        }
    }

    @Test("one round of the server's pruner forgets every past operation, batch after batch, and no younger one",
          arguments: StorageBackend.tested)
    func prunerRound(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend, operationRetention: Self.retention)
        let start = fixture.clock.now
        for index in 0..<10 { _ = try fixture.storage.push(user: "u\(index % 2)", [Self.queued(Mutations.create("old\(index)"), at: start)]) }
        fixture.clock.set(start + 15_000)
        _ = try fixture.storage.push(user: "u0", [Self.queued(Mutations.create("young"), at: start + 15_000)])
        fixture.clock.set(start + 20_000)
        let pruner = RememberedOperationPruner(storage: fixture.storage, intervalMilliseconds: 60_000, batchSize: 3, batchPauseMilliseconds: 1) { _ in }
        #expect(pruner.pruneUntilCaughtUp(pausing: true) == 10)
        #expect(try fixture.rememberedCount() == 1)
        #expect(pruner.pruneUntilCaughtUp() == 0)
    }

    @Test("pruning in small batches while pushes continue forgets only past operations and loses no push",
          arguments: StorageBackend.tested)
    func pruningWhilePushing(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend, operationRetention: Self.retention)
        let storage = fixture.storage
        let start = fixture.clock.now
        for index in 0..<60 { _ = try storage.push(user: "u\(index % 3)", [Self.queued(Mutations.create("old\(index)"), at: start)]) }
        fixture.clock.set(start + 20_000)
        let pushed = Mutex<[(user: String, mutation: Mutation, result: MutationResult)]>([])
        let pruned = Mutex(0)
        let failures = Mutex<[String]>([])
        ConcurrentThreads.run([
            {
                for index in 0..<60 {
                    let user = "u\(index % 3)"
                    let mutation = Self.queued(Mutations.create("new\(index)"), at: start + 20_000)
                    do {
                        let result = try storage.push(user: user, [mutation])
                        pushed.withLock { $0.append((user, mutation, result[0])) }
                    } catch { failures.withLock { $0.append("push: \(error)") } }
                }
            },
            {
                while true {
                    do {
                        let batch = try storage.pruneRememberedOperations(limit: 7)
                        pruned.withLock { $0 += batch }
                        if batch == 0 && pruned.withLock({ $0 }) >= 60 { break }
                    } catch { failures.withLock { $0.append("prune: \(error)") } }
                }
            },
        ])
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(pruned.withLock { $0 } == 60)
        #expect(try fixture.rememberedCount() == 60)
        for entry in pushed.withLock({ $0 }) {
            #expect(entry.result.outcome.appliedRow != nil)
            #expect(try storage.push(user: entry.user, [entry.mutation]) == [entry.result], "answered from memory")
        }
    }
}

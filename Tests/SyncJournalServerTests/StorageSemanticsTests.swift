import Foundation
import Testing
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync

/// ``SyncStorage``'s semantics (those of ``ReferenceServer``), the same
/// checks for every backend: SQLite always, PostgreSQL when a server is there.
@Suite("storage semantics, every backend")
struct StorageSemanticsTests {
    @Test("a create, an update and a delete are applied with the merged fields and a tombstone", arguments: StorageBackend.tested)
    func createUpdateDelete(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        let clock = subject.clock
        let created = try storage.push(user: "u1", [Mutations.create("p1", ["title": .string("Crux"), "grade": .int(7)])])
        let row = try #require(created.first?.outcome.appliedRow)
        #expect(row.fields == ["title": .string("Crux"), "grade": .int(7)])
        #expect(row.updatedAt == clock.now)
        let updated = try storage.push(user: "u1", [Mutations.update("p1", base: row.updatedAt, ["grade": .int(8)])])
        let changed = try #require(updated.first?.outcome.appliedRow)
        #expect(changed.fields == ["title": .string("Crux"), "grade": .int(8)])
        #expect(changed.updatedAt > row.updatedAt)
        let deleted = try storage.push(user: "u1", [Mutations.delete("p1", base: changed.updatedAt)])
        let tombstone = try #require(deleted.first?.outcome.appliedRow)
        #expect(tombstone.isTombstone && tombstone.fields.isEmpty && tombstone.deletedAt == tombstone.updatedAt)
        #expect(try storage.read(user: "u1", kind: "pin", id: "p1") == nil)
        let again = try storage.push(user: "u1", [Mutations.delete("p1", base: 1)])
        #expect(again.first?.outcome == .applied(tombstone), "deleting a deleted row answers its tombstone")
    }

    @Test("conflicts carry the server's row, or null for an update of a missing or deleted row", arguments: StorageBackend.tested)
    func conflictShapes(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        let row = try #require(try storage.push(user: "u1", [Mutations.create("p1")]).first?.outcome.appliedRow)
        #expect(try storage.push(user: "u1", [Mutations.create("p1")]).first?.outcome == .conflict(server: row))
        #expect(try storage.push(user: "u1", [Mutations.update("p1", base: row.updatedAt - 1, ["a": .int(1)])]).first?.outcome
                == .conflict(server: row))
        #expect(try storage.push(user: "u1", [Mutations.delete("p1", base: nil)]).first?.outcome == .conflict(server: row))
        #expect(try storage.push(user: "u1", [Mutations.update("p9", base: 5, ["a": .int(1)])]).first?.outcome == .conflict(server: nil))
        _ = try storage.push(user: "u1", [Mutations.delete("p1", base: row.updatedAt)])
        #expect(try storage.push(user: "u1", [Mutations.update("p1", base: row.updatedAt, ["a": .int(1)])]).first?.outcome
                == .conflict(server: nil))
        let recreated = try storage.push(user: "u1", [Mutations.create("p1", ["title": .string("again")])])
        #expect(recreated.first?.outcome.appliedRow?.fields == ["title": .string("again")], "a create over a tombstone applies")
    }

    @Test("two users each hold their own record of one kind and id in their personal spaces, neither touching the other's", arguments: StorageBackend.tested)
    func anotherUsersRecord(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        let row = try #require(try storage.push(user: "u1", [Mutations.create("p1", ["by": .string("u1")])]).first?.outcome.appliedRow)
        #expect(try storage.push(user: "u2", [Mutations.update("p1", base: row.updatedAt, ["x": .int(1)])]).first?.outcome
                == .conflict(server: nil), "u2 has no p1 to update")
        let theirs = try #require(try storage.push(user: "u2", [Mutations.create("p1", ["by": .string("u2")])]).first?.outcome.appliedRow)
        let deleted = try storage.push(user: "u2", [Mutations.delete("p1", base: theirs.updatedAt)]).first?.outcome.appliedRow
        #expect(deleted?.isTombstone == true)
        #expect(try storage.read(user: "u1", kind: "pin", id: "p1") == row)
        #expect(try storage.read(user: "u2", kind: "pin", id: "p1") == nil)
        #expect(try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10)).rows == [row])
        #expect(try storage.pull(user: "u2", PullRequest(cursors: ["pin": nil], limit: 10)).rows == [try #require(deleted)])
    }

    @Test("a resend of an applied operation id gets the first result and applies nothing again", arguments: StorageBackend.tested)
    func resendGetsFirstResult(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        let clock = subject.clock
        let operation = OperationID.random()
        let first = try storage.push(user: "u1", [Mutations.create("p1", operation: operation)])
        clock.set(clock.now + 1_000)
        let again = try storage.push(user: "u1", [Mutations.create("p1", operation: operation)])
        #expect(again == first)
        let update = Mutations.update("p1", base: first[0].outcome.appliedRow?.updatedAt, ["n": .int(1)])
        let updated = try storage.push(user: "u1", [update])
        #expect(try storage.push(user: "u1", [update]) == updated, "an update is not applied twice")
        #expect(try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10)).rows.count == 1)
        // Another user's same operation id is a different operation.
        #expect(try storage.push(user: "u2", [Mutations.create("p2", operation: operation)]).first?.outcome.appliedRow?.id == "p2")
    }

    @Test("mutations of one record in one push apply in order, each seeing the one before; an operation id twice in one push applies once",
          arguments: StorageBackend.tested)
    func repeatedRecordInOnePush(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        let first = Mutations.create("p1", ["title": .string("one")])
        let results = try storage.push(user: "u1", [first, Mutations.create("p1", ["title": .string("two")]), first,
                                                    Mutations.delete("p1", base: nil), Mutations.create("p2")])
        let row = try #require(results[0].outcome.appliedRow)
        #expect(row.fields == ["title": .string("one")])
        #expect(results[1].outcome == .conflict(server: row), "the second create sees the first")
        #expect(results[2].outcome == .applied(row), "the same operation again answers its first result")
        #expect(results[3].outcome == .conflict(server: row))
        let p2 = try #require(results[4].outcome.appliedRow)
        #expect(p2.updatedAt > row.updatedAt)
        let second = try storage.push(user: "u1", [Mutations.update("p1", base: row.updatedAt, ["grade": .int(1)]),
                                                   Mutations.update("p1", base: row.updatedAt, ["grade": .int(2)]),
                                                   Mutations.delete("p2", base: p2.updatedAt),
                                                   Mutations.create("p2", ["title": .string("again")])])
        let updated = try #require(second[0].outcome.appliedRow)
        #expect(updated.fields == ["title": .string("one"), "grade": .int(1)])
        #expect(second[1].outcome == .conflict(server: updated), "the second update sees the first")
        let tombstone = try #require(second[2].outcome.appliedRow)
        let recreated = try #require(second[3].outcome.appliedRow)
        #expect(tombstone.isTombstone && recreated.fields == ["title": .string("again")] && recreated.updatedAt > tombstone.updatedAt)
        #expect(try storage.read(user: "u1", kind: "pin", id: "p1") == updated)
        #expect(try storage.read(user: "u1", kind: "pin", id: "p2") == recreated)
        let page = try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10))
        #expect(page.rows == [updated, recreated].sorted { PullCursor(updatedAt: $0.updatedAt, id: $0.id) < PullCursor(updatedAt: $1.updatedAt, id: $1.id) })
    }

    @Test("a refusal is not remembered: a resend is judged afresh", arguments: StorageBackend.tested)
    func refusalNotRemembered(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        let row = try #require(try storage.push(user: "u1", [Mutations.create("p1")]).first?.outcome.appliedRow)
        let update = Mutations.update("p1", base: row.updatedAt + 7, ["n": .int(1)])
        #expect(try storage.push(user: "u1", [update]).first?.outcome == .conflict(server: row))
        _ = try storage.push(user: "u1", [Mutations.delete("p1", base: row.updatedAt)])
        #expect(try storage.push(user: "u1", [update]).first?.outcome == .conflict(server: nil))
    }

    @Test("stamps strictly increase while the clock stands still or goes back", arguments: StorageBackend.tested)
    func stampsIncrease(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        let clock = subject.clock
        var last = Int64.min
        for index in 0..<20 {
            if index == 10 { clock.set(clock.now - 60_000) }
            let results = try storage.push(user: "u1", [Mutations.create("p\(index)"), Mutations.create("q\(index)")])
            for result in results {
                let stamp = try #require(result.outcome.appliedRow?.updatedAt)
                #expect(stamp > last)
                last = stamp
            }
        }
        clock.set(last + 1_000_000)
        #expect(try storage.push(user: "u1", [Mutations.create("z")]).first?.outcome.appliedRow?.updatedAt == last + 1_000_000)
    }

    @Test("paging by (updatedAt, id) never skips or repeats a row, with limit + 1 for hasMore and kinds in name order", arguments: StorageBackend.tested)
    func pagingNeverSkips(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        var expected: [ServerRow] = []
        for kind in ["pin", "note"] {
            for index in 0..<7 {
                expected += try storage.push(user: "u1", [Mutations.create("r\(index)", kind: kind)]).compactMap(\.outcome.appliedRow)
            }
        }
        _ = try storage.push(user: "u2", [Mutations.create("other")])
        expected.sort { ($0.kind, $0.updatedAt) < ($1.kind, $1.updatedAt) }
        for limit in [1, 2, 3, 13, 14, 15] {
            var cursors: [String: PullCursor?] = ["pin": nil, "note": nil]
            var seen: [ServerRow] = []
            var pages = 0
            while true {
                let page = try storage.pull(user: "u1", PullRequest(cursors: cursors, limit: limit))
                #expect(page.rows.count <= limit)
                seen += page.rows
                for (kind, cursor) in page.nextCursors { cursors[kind] = cursor }
                pages += 1
                if !page.hasMore { break }
            }
            #expect(seen == expected, "limit \(limit)")
            #expect(pages == (14 + limit - 1) / limit, "the last page says hasMore false, never an empty extra page")
        }
    }

    @Test("rows sharing a stamp are ordered and paged by id (a cursor in the middle of a tie)", arguments: StorageBackend.tested)
    func sameStampRows(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        // The storages never issue one stamp twice; a cursor may still
        // point into the middle of equal stamps (a row's id breaks the tie).
        let rows = try storage.push(user: "u1", (0..<5).map { Mutations.create("r\($0)") }).compactMap(\.outcome.appliedRow)
        let third = rows[2]
        let page = try storage.pull(user: "u1", PullRequest(cursors: ["pin": PullCursor(updatedAt: third.updatedAt, id: "r2")], limit: 10))
        #expect(page.rows == Array(rows[3...]))
        let tie = try storage.pull(user: "u1", PullRequest(cursors: ["pin": PullCursor(updatedAt: third.updatedAt, id: "r1")], limit: 10))
        #expect(tie.rows == Array(rows[2...]), "an id before r2 at r2's stamp still gets r2")
    }

    @Test("tombstones are pulled like rows", arguments: StorageBackend.tested)
    func tombstonesPulled(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        let row = try #require(try storage.push(user: "u1", [Mutations.create("p1")]).first?.outcome.appliedRow)
        let cursor = PullCursor(updatedAt: row.updatedAt, id: row.id)
        let tombstone = try #require(try storage.push(user: "u1", [Mutations.delete("p1", base: row.updatedAt)]).first?.outcome.appliedRow)
        let page = try storage.pull(user: "u1", PullRequest(cursors: ["pin": cursor], limit: 10))
        #expect(page.rows == [tombstone])
        #expect(page.nextCursors == ["pin": PullCursor(updatedAt: tombstone.updatedAt, id: "p1")])
    }

    @Test("a malformed cursor or limit is an error, never everything", arguments: StorageBackend.tested)
    func malformedCursor(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        #expect(throws: StorageError.badCursor(kind: "pin", reason: "the cursor's id must be 1 to 64 bytes of UTF-8")) {
            try storage.pull(user: "u1", PullRequest(cursors: ["pin": PullCursor(updatedAt: 5, id: "")], limit: 10))
        }
        #expect(throws: StorageError.self) {
            try storage.pull(user: "u1", PullRequest(cursors: ["pin": PullCursor(updatedAt: 5, id: String(repeating: "x", count: 65))], limit: 10))
        }
        #expect(throws: StorageError.badRequest("limit must be 1 to 10000, not 0")) {
            try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 0))
        }
    }

    @Test("a cursor behind a purged tombstone is expired, a resync is not refused, and the last page moves to the horizon", arguments: StorageBackend.tested)
    func tombstoneHorizon(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        let a = try #require(try storage.push(user: "u1", [Mutations.create("a")]).first?.outcome.appliedRow)
        let behind = PullCursor(updatedAt: a.updatedAt, id: "a")
        let tombstone = try #require(try storage.push(user: "u1", [Mutations.delete("a", base: a.updatedAt)]).first?.outcome.appliedRow)
        #expect(try storage.purgeTombstones(olderThan: tombstone.updatedAt + 1, kind: "pin") == 1)
        #expect(throws: StorageError.cursorExpired(kinds: ["pin"])) {
            try storage.pull(user: "u1", PullRequest(cursors: ["pin": behind, "note": nil], limit: 10))
        }
        let resync = try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10, isResync: true))
        #expect(resync.rows.isEmpty)
        #expect(resync.nextCursors == ["pin": PullCursor(updatedAt: tombstone.updatedAt, id: "a")])
        let later = try #require(try storage.push(user: "u1", [Mutations.create("b")]).first?.outcome.appliedRow)
        #expect(later.updatedAt > tombstone.updatedAt, "later writes sort after the horizon")
        let after = try storage.pull(user: "u1", PullRequest(cursors: ["pin": resync.nextCursors["pin"]], limit: 10))
        #expect(after.rows == [later])
    }

    @Test("a push is one transaction: the data survives reopening the database", arguments: StorageBackend.tested)
    func survivesReopen(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        let results = try storage.push(user: "u1", (0..<10).map { Mutations.create("r\($0)", ["n": .int(Int64($0)), "d": .double(.nan), "s": .stringSet(["b", "a"]), "b": .bytes([0, 1, 255])]) })
        let reopened = try subject.reopen()
        let page = try reopened.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 100))
        #expect(page.rows == results.compactMap(\.outcome.appliedRow))
    }

    @Test("invalid kinds, record ids and field names are rejected permanently", arguments: StorageBackend.tested)
    func invalidMutations(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        let results = try storage.push(user: "u1", [Mutations.create("p1", kind: ""), Mutations.create(""),
                                                    Mutations.create(String(repeating: "é", count: 33)), Mutations.create("p1", ["": .null])])
        #expect(results.allSatisfy { if case .rejected(_, true) = $0.outcome { true } else { false } })
        #expect(try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10)).rows.isEmpty)
    }

    @Test("a pull of large records ends its page at about 4 MiB with more to come, a record past the budget still comes alone, and following the cursors reads every row once, in order",
          arguments: StorageBackend.tested)
    func pullPageByteBudget(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        let megabyte = String(repeating: "m", count: 1 << 20)
        var creates = (0..<9).map { Mutations.create("p\($0)", ["body": .string(megabyte)]) }
        creates.insert(Mutations.create("huge", ["body": .string(String(repeating: "h", count: 5 << 20))]), at: 4)
        creates += (0..<50).map { Mutations.create("s\($0)", ["n": .int(Int64($0))]) }
        for start in stride(from: 0, to: creates.count, by: 10) {
            let results = try storage.push(user: "u1", Array(creates[start..<min(start + 10, creates.count)]))
            #expect(results.allSatisfy { $0.outcome.appliedRow != nil })
        }
        var cursor: PullCursor?
        var seen: [String] = []
        var pages: [[String]] = []
        while true {
            let page = try storage.pull(user: "u1", PullRequest(cursors: ["pin": cursor], limit: 500))
            let bytes = page.rows.reduce(0) { $0 + $1.approximateWireBytes }
            #expect(!page.rows.isEmpty || !page.hasMore)
            #expect(page.rows.count == 1 || bytes <= ProtocolLimits.pullPageByteBudget, "a page of \(page.rows.count) rows, \(bytes) bytes")
            seen += page.rows.map(\.id)
            pages.append(page.rows.map(\.id))
            cursor = page.nextCursors["pin"] ?? cursor
            if !page.hasMore { break }
        }
        #expect(seen == creates.map(\.recordID), "every row once, in stamp order")
        #expect(pages.contains(["huge"]), "the record past the budget came in a page of its own: \(pages)")
        #expect(pages.count >= 4 && pages.count < 10, "\(pages.map(\.count))")
        #expect(pages.last?.contains("s49") == true && (pages.last?.count ?? 0) >= 50, "small rows share a page")
    }
}

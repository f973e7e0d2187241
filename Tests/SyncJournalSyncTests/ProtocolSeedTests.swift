import Foundation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// The pull and push protocol's own cases (cursor ties, tombstones, paging,
/// stale bases, malformed cursors), against the reference server and through
/// the engine.
@Suite("Sync protocol: cursors, tombstones, pages and bases")
struct ProtocolSeedTests {
    @Test("a pull replayed with the returned cursors yields nothing new")
    func pullReplayedWithReturnedCursorsYieldsNothingNew() async throws {
        let server = ReferenceServer()
        for index in 0..<3 {
            await server.write(user: "u1", kind: "pin", id: "p\(index)", fields: ["n": .int(Int64(index))])
            await server.write(user: "u1", kind: "note", id: "n\(index)", fields: [:])
        }
        let first = try await server.pull(user: "u1", cursors: ["pin": nil, "note": nil], limit: 10)
        #expect(first.rows.count == 6)
        #expect(first.hasMore == false)
        let replay = try await server.pull(user: "u1", cursors: first.nextCursors.mapValues { $0.wire }, limit: 10)
        #expect(replay.rows.isEmpty)
        #expect(replay.hasMore == false)
        #expect(replay.nextCursors.isEmpty)

        // Through the engine: the second sync pulls nothing and keeps the cursors.
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let device = try await Device.open(dir.file("a.journal"), server: server, kinds: ["note", "pin"])
        #expect(await device.sync() == .ok(pushed: 0, pulled: 6, conflicts: 0))
        let cursors = try await device.store.cursors(for: ["note", "pin"])
        #expect(await device.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(try await device.store.cursors(for: ["note", "pin"]) == cursors)
    }

    @Test("a malformed cursor is a permanent error, not a full download",
          arguments: ["garbage", "", "12", ":p1", "abc:p1", "12:", "1.5:p1", "0x10:p1"])
    func malformedCursorIsAnError(_ text: String) async throws {
        let server = ReferenceServer()
        await server.write(user: "u1", kind: "pin", id: "p1", fields: [:])
        do {
            let page = try await server.pull(user: "u1", cursors: ["pin": text], limit: 10)
            Issue.record("a malformed cursor \"\(text)\" returned \(page.rows.count) rows")
        } catch {
            guard case .permanent(let reason) = error else {
                Issue.record("expected a permanent error, got \(error)")
                return
            }
            #expect(reason.contains("malformed cursor"))
        }
    }

    @Test("a malformed cursor from a transport is an error outcome and the device keeps its cursor")
    func malformedCursorThroughEngineIsAnError() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        await server.write(user: "u1", kind: "pin", id: "p1", fields: [:])
        let store = try await openStore(dir.file("a.journal"))
        // A transport whose serializer is broken: it sends "garbage" as the cursor.
        let broken = ScriptedTransport(onPull: { request throws(TransportError) in
            try await server.pull(user: "u1", cursors: request.cursors.mapValues { _ in "garbage" }, limit: request.limit)
        })
        let engine = SyncEngine(store: store, transport: broken, options: .init(kinds: ["pin"]))
        let outcome = await engine.sync()
        guard case .transport(.permanent) = outcome.failure else {
            Issue.record("expected the transport's permanent refusal, got \(outcome)")
            return
        }
        #expect(try await store.records("pin").isEmpty, "nothing downloaded")
        #expect(try await store.cursor(for: "pin") == nil)
    }

    @Test("a stale base produces a conflict with the server's copy attached")
    func staleBaseProducesConflictWithServerCopy() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let phone = try await Device.open(dir.file("phone.journal"), server: server)
        let tablet = try await Device.open(dir.file("tablet.journal"), server: server)
        try await phone.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        #expect(await phone.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await tablet.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        let original = try #require(await server.row(kind: "pin", id: "p1"))

        try await tablet.store.update("pin", id: "p1", changes: ["name": .string("Tablet")])
        #expect(await tablet.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        let serverCopy = try #require(await server.row(kind: "pin", id: "p1"))

        try await phone.store.update("pin", id: "p1", changes: ["name": .string("Phone")])
        let stale = try #require(try await phone.store.outboxOperations().first).operation
        #expect(await phone.sync() == .ok(pushed: 0, pulled: 1, conflicts: 1))
        let conflicts = try await phone.store.conflicts()
        #expect(conflicts == [ConflictRecord(operation: stale, server: serverCopy, baseRow: original,
                                             resolution: serverWinsResolution(for: stale))])
        #expect(conflicts.first?.base != serverCopy.updatedAt)
        #expect(await server.row(kind: "pin", id: "p1") == serverCopy, "the tablet's edit is not overwritten")
        #expect(try await phone.store.record("pin", id: "p1")?.fields == ["name": .string("Tablet")])
        #expect(try await phone.store.outboxOperations().isEmpty)
    }

    @Test("another user's record is out of reach: a second user's update and delete of its id touch only that user's own personal space")
    func anotherUsersRecordIsOutOfReach() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let owner = try await Device.open(dir.file("u1.journal"), server: server, user: "u1")
        try await owner.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        #expect(await owner.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        let original = try #require(await server.read(user: "u1", kind: "pin", id: "p1"))

        // On the wire: u2 updates and deletes "p1" with u1's base; u2 has no such record.
        let update = Mutation(operationID: .random(), kind: "pin", op: .update, recordID: "p1",
                              fields: ["name": .string("Hijacked")], baseUpdatedAt: original.updatedAt)
        let delete = Mutation(operationID: .random(), kind: "pin", op: .delete, recordID: "p1",
                              fields: [:], baseUpdatedAt: original.updatedAt)
        let results = try await server.push(user: "u2", [update, delete])
        #expect(results.first?.outcome == .conflict(server: nil))
        guard case .applied(let tombstone)? = results.last?.outcome else {
            Issue.record("expected u2's own tombstone, got \(String(describing: results.last?.outcome))")
            return
        }
        #expect(tombstone.isTombstone, "a delete of nothing leaves u2 its own tombstone")
        #expect(await server.read(user: "u1", kind: "pin", id: "p1") == original, "u1's row is unchanged")
        #expect(await server.read(user: "u2", kind: "pin", id: "p1") == nil)

        // Through an engine: u2's own record of the same id syncs beside u1's.
        let other = try await Device.open(dir.file("u2.journal"), server: server, user: "u2")
        try await other.store.create("pin", id: "p2", fields: ["name": .string("Mine")])
        #expect(await other.sync() == .ok(pushed: 1, pulled: 2, conflicts: 0))
        #expect(await other.recorder.pulledRows.map(\.id).sorted() == ["p1", "p2"], "u2 pulls its own tombstone of p1 and p2, never u1's row")
        #expect(await other.recorder.pulledRows.first { $0.id == "p1" }?.isTombstone == true)
        #expect(await owner.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(try await owner.store.record("pin", id: "p1")?.fields == ["name": .string("Cafe")])
    }

    @Test("tombstones propagate to a second device")
    func tombstonePropagatesToSecondDevice() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let phone = try await Device.open(dir.file("phone.journal"), server: server)
        let tablet = try await Device.open(dir.file("tablet.journal"), server: server)
        try await phone.store.create("pin", id: "p1", fields: ["name": .string("Cafe")])
        try await phone.store.create("pin", id: "p2", fields: ["name": .string("Museum")])
        #expect(await phone.sync() == .ok(pushed: 2, pulled: 2, conflicts: 0))
        #expect(await tablet.sync() == .ok(pushed: 0, pulled: 2, conflicts: 0))

        try await phone.store.delete("pin", id: "p1")
        #expect(await phone.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await server.row(kind: "pin", id: "p1") == nil)

        #expect(await tablet.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        let tombstone = try #require(await tablet.recorder.pulledRows.last)
        #expect(tombstone.id == "p1" && tombstone.isTombstone)
        #expect(try await tablet.store.record("pin", id: "p1") == nil)
        #expect(try await tablet.store.records("pin").map(\.id) == ["p2"])
        #expect(try await tablet.store.cursor(for: "pin") == cursor(after: tombstone))
    }

    @Test("multi-page pulls: 7 rows with a page size of 2 arrive in 4 pages")
    func multiPagePulls() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        for index in 0..<7 {
            await server.write(user: "u1", kind: "pin", id: "p\(index)", fields: ["n": .int(Int64(index))])
            await server.tick(1)
        }
        let device = try await Device.open(dir.file("a.journal"), server: server, pullLimit: 2)
        #expect(await device.sync() == .ok(pushed: 0, pulled: 7, conflicts: 0))
        let pages = await device.recorder.pages
        #expect(pages.map(\.rows.count) == [2, 2, 2, 1])
        #expect(pages.map(\.hasMore) == [true, true, true, false])
        #expect(await device.recorder.pulledRows.map(\.id) == (0..<7).map { "p\($0)" })
        #expect(try await device.store.records("pin").count == 7)
        // Each request carried the previous page's cursor.
        let requests = await device.recorder.pullRequests
        for (index, request) in requests.enumerated().dropFirst() {
            #expect(request.cursors["pin"] == .some(pages[index - 1].nextCursors["pin"]))
        }
    }

    @Test("the same-stamp tie across a page boundary: every row arrives exactly once")
    func sameStampTieAcrossPageBoundary() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        // No tick: the writes share one updatedAt.
        var written: [ServerRow] = []
        for id in ["e", "a", "d", "b", "c"] {
            written.append(await server.write(user: "u1", kind: "pin", id: id, fields: ["id": .string(id)]))
        }
        #expect(Set(written.map(\.updatedAt)).count == 1, "the five rows share one stamp")
        let device = try await Device.open(dir.file("a.journal"), server: server, pullLimit: 2)

        #expect(await device.sync() == .ok(pushed: 0, pulled: 5, conflicts: 0))
        let pulled = await device.recorder.pulledRows.map(\.id)
        #expect(pulled == ["a", "b", "c", "d", "e"], "each row exactly once, ordered by id within the stamp")
        #expect(await device.recorder.pages.count == 3)
        #expect(try await device.store.records("pin").map(\.id) == ["a", "b", "c", "d", "e"])
        #expect(try await device.store.cursor(for: "pin") == PullCursor(updatedAt: written[0].updatedAt, id: "e"))

        // A plain `updatedAt >` cursor would have lost the rest of the tie: the
        // server's page after (stamp, "b") still holds c, d and e.
        let afterB = try await server.pull(user: "u1", cursors: ["pin": "\(written[0].updatedAt):b"], limit: 10)
        #expect(afterB.rows.map(\.id) == ["c", "d", "e"])
    }

    @Test("the server rejects an empty record id and one over 64 characters, permanently")
    func emptyOrOverlongIDIsRejected() async throws {
        let server = ReferenceServer()
        for id in ["", String(repeating: "a", count: 65)] {
            let mutation = Mutation(operationID: .random(), kind: "pin", op: .create, recordID: id, fields: [:], baseUpdatedAt: nil)
            let result = try await server.push(user: "u1", [mutation])
            guard case .rejected(_, let permanent) = result.first?.outcome else {
                Issue.record("id of \(id.count) characters was not rejected: \(String(describing: result.first?.outcome))")
                continue
            }
            #expect(permanent)
        }
        // 64 ASCII characters is the longest id, and it is accepted.
        let longest = Mutation(operationID: .random(), kind: "pin", op: .create, recordID: String(repeating: "a", count: 64),
                               fields: [:], baseUpdatedAt: nil)
        guard case .applied = try await server.push(user: "u1", [longest]).first?.outcome else {
            Issue.record("a 64-character ASCII id was refused")
            return
        }
        #expect(await server.appliedMutations == 1)
    }

    @Test("a record id the device cannot store (64 characters, 128 UTF-8 bytes) is refused by the server, so pulls keep working")
    func idOverSixtyFourBytesIsRefusedByTheServer() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        // The store and the journal format allow at most 64 UTF-8 bytes per id.
        let wide = String(repeating: "é", count: 64)
        #expect(wide.count == 64 && wide.utf8.count == 128)
        let device = try await Device.open(dir.file("a.journal"), server: server)
        await #expect(throws: StoreError.self) { try await device.store.create("pin", id: wide, fields: [:]) }

        // Another client of the same user (a web app) pushes that id.
        let mutation = Mutation(operationID: .random(), kind: "pin", op: .create, recordID: wide, fields: [:], baseUpdatedAt: nil)
        let outcome = try await server.push(user: "u1", [mutation]).first?.outcome
        await server.tick(1)
        await server.write(user: "u1", kind: "pin", id: "after", fields: [:])
        if case .rejected(_, true) = outcome {} else {
            Issue.record("the server accepted an id of 128 UTF-8 bytes: \(String(describing: outcome))")
        }
        // The device's pulls are unaffected (today: every pull fails on that row, for good).
        let first = await device.sync()
        #expect(first == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(await device.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(try await device.store.records("pin").map(\.id) == ["after"])
    }
}

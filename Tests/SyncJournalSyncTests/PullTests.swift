import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// Pulling: the page cap, malformed replies, cursors from server data only,
/// rows and cursor journaled together, resuming, empty pages, tombstones, and
/// pending edits staying on top.
@Suite("Sync engine: pull")
struct PullTests {
    // MARK: The page cap

    @Test("a pull that never ends stops with an error after exactly 50 pages")
    func pullStopsAfterFiftyPages() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        // Every page holds one new row after the cursor and says there is more.
        let endless = ScriptedTransport(onPull: { request throws(TransportError) in
            let after = (request.cursors["pin"] ?? nil)?.updatedAt ?? 0
            let next = serverRow("r\(after + 1)", at: after + 1)
            return PullPage(rows: [next], nextCursors: ["pin": cursor(after: next)], hasMore: true)
        })
        let recorder = RecordingTransport(endless)
        let engine = SyncEngine(store: store, transport: recorder, options: .init(kinds: ["pin"]))

        let outcome = await engine.sync()
        #expect(outcome.isError)
        #expect(outcome.failure == .pullNotFinished(.pageLimit(pages: 50)))
        #expect(await recorder.pullRequests.count == 50)
        // Each page's cursor advanced from the one before.
        let requested = await recorder.pullRequests.map { ($0.cursors["pin"] ?? nil)?.updatedAt }
        #expect(requested == [nil] + (1...49).map { Int64($0) })
    }

    // MARK: Malformed replies

    enum MalformedPull: String, CaseIterable, Sendable, CustomStringConvertible {
        case nextCursorDoesNotMatchLastRow
        case nextCursorBehindLastRow
        case rowsOutOfOrder
        case rowOfKindNotAskedFor
        case moreRowsThanTheLimit
        case rowBehindTheCursor
        case rowsWithoutNextCursor
        case duplicateRow

        var description: String { rawValue }

        /// The page; the store holds p1 at 100 and the cursor 100:p1, the limit is 2.
        var page: PullPage {
            let b = serverRow("b", at: 200, ["name": .string("B")])
            let c = serverRow("c", at: 300, ["name": .string("C")])
            switch self {
            case .nextCursorDoesNotMatchLastRow:
                // Beyond the last row on a page that is not the last: rows in between would be skipped.
                return PullPage(rows: [b], nextCursors: ["pin": PullCursor(updatedAt: 900, id: "b")], hasMore: true)
            case .nextCursorBehindLastRow:
                return PullPage(rows: [b, c], nextCursors: ["pin": cursor(after: b)], hasMore: false)
            case .rowsOutOfOrder:
                return PullPage(rows: [c, b], nextCursors: ["pin": cursor(after: b)], hasMore: false)
            case .rowOfKindNotAskedFor:
                let secret = serverRow("x", at: 200, kind: "secret", ["name": .string("X")])
                return PullPage(rows: [secret], nextCursors: ["secret": cursor(after: secret)], hasMore: false)
            case .moreRowsThanTheLimit:
                let d = serverRow("d", at: 400)
                return PullPage(rows: [b, c, d], nextCursors: ["pin": cursor(after: d)], hasMore: false)
            case .rowBehindTheCursor:
                let old = serverRow("a", at: 50, ["name": .string("old")])
                return PullPage(rows: [old], nextCursors: ["pin": cursor(after: old)], hasMore: false)
            case .rowsWithoutNextCursor:
                return PullPage(rows: [b], nextCursors: [:], hasMore: false)
            case .duplicateRow:
                return PullPage(rows: [b, b], nextCursors: ["pin": cursor(after: b)], hasMore: false)
            }
        }
    }

    @Test("a malformed pull reply is an error and the snapshot and cursors stay", arguments: MalformedPull.allCases)
    func malformedPullReplyKeepsNothing(_ malformed: MalformedPull) async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        let p1 = serverRow("p1", at: 100, ["name": .string("Cafe")])
        try await store.applyPulledPage(kind: "pin", rows: [p1], cursor: cursor(after: p1))
        let page = malformed.page
        let engine = SyncEngine(store: store, transport: ScriptedTransport(onPull: { _ throws(TransportError) in page }),
                                options: .init(kinds: ["pin"], pullLimit: 2))
        let before = try await store.currentState()
        let sizeBefore = try fileSize(store.path)

        let outcome = await engine.sync()
        #expect(outcome.isError)
        #expect(try await store.currentState() == before)
        #expect(try await store.cursor(for: "pin") == cursor(after: p1))
        #expect(try fileSize(store.path) == sizeBefore)
    }

    @Test("a malformed page after good ones keeps the good pages and stops")
    func malformedPageAfterGoodOnesStops() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        let a = serverRow("a", at: 10)
        let transport = ScriptedTransport(onPull: { request throws(TransportError) in
            if (request.cursors["pin"] ?? nil) == nil {
                return PullPage(rows: [a], nextCursors: ["pin": cursor(after: a)], hasMore: true)
            }
            let b = serverRow("b", at: 20)
            // A cursor behind the page's last row: malformed on any page.
            return PullPage(rows: [b], nextCursors: ["pin": PullCursor(updatedAt: 15, id: "b")], hasMore: false)
        })
        let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["pin"]))
        let outcome = await engine.sync()
        guard case .malformedReply(.pullPage) = outcome.failure else {
            Issue.record("expected a malformed pull page, got \(outcome)")
            return
        }
        #expect(try await store.cursor(for: "pin") == cursor(after: a))
        #expect(try await store.records("pin").map(\.id) == ["a"])
    }

    // MARK: Cursors

    @Test("cursors come only from server data: after a sync the cursor is the last pulled row, never the device clock")
    func cursorsComeOnlyFromServerData() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server,
                                           clock: StillClock(milliseconds: farFutureMilliseconds))
        await server.write(user: "u1", kind: "pin", id: "p1", fields: ["name": .string("A")])
        await server.tick(5)
        await server.write(user: "u1", kind: "pin", id: "p2", fields: ["name": .string("B")])
        try await device.store.create("pin", id: "p3", fields: ["name": .string("C")])

        #expect(await device.sync() == .ok(pushed: 1, pulled: 3, conflicts: 0))
        let last = try #require(await device.recorder.pulledRows.last)
        let stored = try #require(try await device.store.cursor(for: "pin"))
        #expect(stored == cursor(after: last))
        #expect(stored.updatedAt < farFutureMilliseconds)
        #expect(stored.updatedAt == (await server.row(kind: "pin", id: "p3"))?.updatedAt)

        // Bases are server stamps too; the device clock only stamps queuedAt.
        try await device.store.update("pin", id: "p1", changes: ["name": .string("A2")])
        let update = try #require(try await device.store.outboxOperations().first).operation
        #expect(update.baseUpdatedAt == (await server.row(kind: "pin", id: "p1"))?.updatedAt)
        #expect(update.queuedAt == farFutureMilliseconds)
        #expect(await device.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(try await device.store.cursor(for: "pin")?.updatedAt == (await server.row(kind: "pin", id: "p1"))?.updatedAt)
    }

    @Test("a page's rows and its cursor are journaled together: after a reopen both are there")
    func rowsAndCursorAreJournaledTogether() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        for index in 0..<3 {
            await server.write(user: "u1", kind: "pin", id: "p\(index)", fields: ["n": .int(Int64(index))])
            await server.tick(1)
        }
        let path = dir.file("a.journal")
        let device = try await Device.open(path, server: server, pullLimit: 2)
        #expect(await device.sync() == .ok(pushed: 0, pulled: 3, conflicts: 0))
        let cursorBefore = try await device.store.cursor(for: "pin")
        let snapshotBefore = try await device.store.currentState().snapshot
        try await device.store.close()

        // In the file: one record per page, holding the page's rows and the cursor after them.
        var pulled: [(rows: [ServerRow], cursor: PullCursor?)] = []
        _ = try JournalReader(path: path).scan { record in
            if case .pulled(_, let rows, let cursor, _)? = try StoreEvent.decode(record) { pulled.append((rows, cursor)) }
        }
        #expect(pulled.map(\.rows.count) == [2, 1])
        for page in pulled {
            #expect(page.cursor == page.rows.last.map { cursor(after: $0) })
        }

        let reopened = try await openStore(path)
        #expect(try await reopened.cursor(for: "pin") == cursorBefore)
        #expect(try await reopened.currentState().snapshot == snapshotBefore)
        #expect(try await reopened.records("pin").map(\.id) == ["p0", "p1", "p2"])
        try await reopened.close()
    }

    @Test("a pull cut short resumes where it stopped on the next sync, without downloading again")
    func pullCutShortResumes() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        for index in 0..<5 {
            await server.write(user: "u1", kind: "pin", id: "p\(index)", fields: ["n": .int(Int64(index))])
            await server.tick(1)
        }
        let device = try await Device.open(dir.file("a.journal"), server: server, pullLimit: 2)

        // The first page goes through; then the connection drops.
        await device.faulty.holdNextRequest(.pull)
        let first = Task { await device.sync() }
        await device.faulty.waitUntilHeld()
        await device.faulty.inject(.offline, on: .pull)
        await device.faulty.releaseHeld()
        #expect(await first.value == .skipped(.offline))
        let firstPage = try #require(await device.recorder.pages.first)
        #expect(firstPage.rows.map(\.id) == ["p0", "p1"])
        #expect(try await device.store.cursor(for: "pin") == cursor(after: firstPage.rows[1]))
        #expect(try await device.store.records("pin").map(\.id) == ["p0", "p1"])

        #expect(await device.sync() == .ok(pushed: 0, pulled: 3, conflicts: 0))
        let requests = await device.recorder.pullRequests
        #expect(requests.count == 3, "the offline request never reached the server")
        #expect(requests[1].cursors["pin"] == .some(cursor(after: firstPage.rows[1])), "resumes after the last kept row")
        let ids = await device.recorder.pulledRows.map(\.id)
        #expect(ids == ["p0", "p1", "p2", "p3", "p4"], "every row downloaded exactly once")
        #expect(try await device.store.records("pin").count == 5)
    }

    @Test("an empty page keeps the cursor")
    func emptyPageKeepsTheCursor() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        let p1 = serverRow("p1", at: 100)
        try await store.applyPulledPage(kind: "pin", rows: [p1], cursor: cursor(after: p1))
        let recorder = RecordingTransport(ScriptedTransport())   // answers every pull with an empty page
        let engine = SyncEngine(store: store, transport: recorder, options: .init(kinds: ["pin", "note"]))
        let sizeBefore = try fileSize(store.path)

        #expect(await engine.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(try await store.cursor(for: "pin") == cursor(after: p1))
        #expect(try await store.cursor(for: "note") == nil)
        #expect(try fileSize(store.path) == sizeBefore)
        // The request carried the stored cursor, and nil for the kind never pulled.
        let request = try #require(await recorder.pullRequests.first)
        #expect(request.cursors["pin"] == .some(cursor(after: p1)))
        #expect(request.cursors["note"] == .some(nil))

        // Through the reference server too.
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("b.journal"), server: server)
        await server.write(user: "u1", kind: "pin", id: "p1", fields: [:])
        #expect(await device.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        let after = try await device.store.cursor(for: "pin")
        #expect(await device.sync() == .ok(pushed: 0, pulled: 0, conflicts: 0))
        #expect(try await device.store.cursor(for: "pin") == after)
    }

    @Test("a tombstone from the server removes the local copy")
    func tombstoneRemovesLocalCopy() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server)
        await server.write(user: "u1", kind: "pin", id: "p1", fields: ["name": .string("Cafe")])
        #expect(await device.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(try await device.store.record("pin", id: "p1") != nil)

        let tombstone = try #require(await server.delete(kind: "pin", id: "p1"))
        #expect(await device.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(try await device.store.record("pin", id: "p1") == nil)
        #expect(try await device.store.currentState().snapshot[RecordKey(kind: "pin", id: "p1")] == nil)
        #expect(try await device.store.cursor(for: "pin") == cursor(after: tombstone))
    }

    @Test("pulled rows never overwrite a pending local edit: it stays on top with its base, and the push decides (a conflict)")
    func pulledRowsNeverOverwritePendingEdits() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        let device = try await Device.open(dir.file("a.journal"), server: server)
        let store = device.store
        await server.write(user: "u1", kind: "pin", id: "p1", fields: ["name": .string("Cafe"), "stars": .int(3)])
        #expect(await device.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        let original = try #require(await server.row(kind: "pin", id: "p1"))

        // The pull is open; meanwhile the device edits p1 and another writer changes it on the server.
        await device.faulty.holdNextRequest(.pull)
        let sync = Task { await device.sync() }
        await device.faulty.waitUntilHeld()
        try await store.update("pin", id: "p1", changes: ["name": .string("Mine")])
        let theirs = try #require(await server.update(kind: "pin", id: "p1", changes: ["name": .string("Theirs"), "stars": .int(5)]))
        await device.faulty.releaseHeld()
        #expect(await sync.value == .ok(pushed: 0, pulled: 1, conflicts: 0))

        // The snapshot has the server's row; the edit stays on top with its original base.
        #expect(try await store.currentState().snapshot[RecordKey(kind: "pin", id: "p1")] == theirs)
        let pending = try await store.outboxOperations()
        #expect(pending.count == 1)
        #expect(pending.first?.operation.baseUpdatedAt == original.updatedAt)
        let visible = try #require(try await store.record("pin", id: "p1"))
        #expect(visible.fields == ["name": .string("Mine"), "stars": .int(5)])
        #expect(visible.hasPendingChanges)

        // The push decides: the server changed since the base, so a conflict with its copy.
        #expect(await device.sync() == .ok(pushed: 0, pulled: 0, conflicts: 1))
        #expect(try await store.conflicts().first?.server == theirs)
        #expect(try await store.record("pin", id: "p1")?.fields == theirs.fields)
        #expect(await server.row(kind: "pin", id: "p1") == theirs)
    }

    @Test("a server write during a multi-page pull is never skipped, even with an id that sorts first")
    func writeDuringMultiPagePullIsNotSkipped() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let server = ReferenceServer()
        for id in ["m1", "m2", "m3"] { await server.write(user: "u1", kind: "pin", id: id, fields: [:]) }
        let device = try await Device.open(dir.file("a.journal"), server: server, pullLimit: 2)

        // Let the first page through, hold the second, write, release.
        await device.faulty.holdNextRequest(.pull)
        let sync = Task { await device.sync() }
        await device.faulty.waitUntilHeld()
        await device.faulty.holdNextRequest(.pull)
        await device.faulty.releaseHeld()
        await device.faulty.waitUntilHeld()
        #expect(await device.recorder.pulledRows.map(\.id) == ["m1", "m2"])
        await server.write(user: "u1", kind: "pin", id: "a0", fields: [:])
        await device.faulty.releaseHeld()
        #expect(await sync.value == .ok(pushed: 0, pulled: 4, conflicts: 0))
        #expect(try await device.store.records("pin").map(\.id) == ["a0", "m1", "m2", "m3"])
    }
}

import Dispatch
import Foundation
import Testing
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalTesting
import SyncJournalWire

/// `POST /v1/sync/wait` against an in-process sync-server on each backend.
@Suite("waits for changes on sync-server")
struct ChangeWaitTests {
    @Test("a wait opened after its user's rows changed past its cursor answers changed at once", arguments: StorageBackend.tested)
    func answersAtOnce(_ backend: StorageBackend) throws {
        let server = try ChangeWaitServer(backend)
        // Answered by the push's change notice: once it is, a late notice
        // (PostgreSQL's comes through LISTEN) cannot wake the waits below.
        let marker = try server.openWait(["pin": nil], token: "t-alice", holding: 1)
        let row = try server.push("pin", "p1")
        #expect(ChangeWaitServer.answers(try marker.readResponse(), changed: true))
        #expect(ChangeWaitServer.answers(try server.wait(["pin": nil], timeoutMilliseconds: 60_000), changed: true))
        #expect(ChangeWaitServer.answers(try server.wait(["note": nil, "pin": PullCursor(updatedAt: row.updatedAt - 1, id: "p1")],
                                                         timeoutMilliseconds: 60_000), changed: true))
        // At the row itself nothing is past the cursor (the pull's ordering), so a wait of 0 ms answers no change.
        #expect(ChangeWaitServer.answers(try server.wait(["pin": PullCursor(updatedAt: row.updatedAt, id: "p1")], timeoutMilliseconds: 0),
                                         changed: false))
        #expect(ChangeWaitServer.answers(try server.wait(["pin": nil], timeoutMilliseconds: 0, token: "t-bob"), changed: false),
                "bob has no rows")
        #expect(server.server.changeWaits.count == 0)
    }

    @Test("a parked wait is answered changed when another device of its user pushes a kind it names", arguments: StorageBackend.tested)
    func wokenBySameUser(_ backend: StorageBackend) throws {
        let server = try ChangeWaitServer(backend)
        let waiting = try server.openWait(["pin": nil, "note": nil], token: "t-alice", holding: 1)
        try server.push("note", "n1")
        #expect(ChangeWaitServer.answers(try waiting.readResponse(), changed: true))
        #expect(server.server.changeWaits.waitUntil(timeoutMilliseconds: ChangeWaitServer.patience) { $0 == 0 })
    }

    @Test("another user's push does not answer a parked wait, nor a push of a kind it does not name", arguments: StorageBackend.tested)
    func notWokenByOthers(_ backend: StorageBackend) throws {
        let server = try ChangeWaitServer(backend)
        let bob = try server.openWait(["pin": nil], token: "t-bob", holding: 1)
        let bobNotes = try server.openWait(["note": nil], token: "t-bob", holding: 2)
        let alice = try server.openWait(["pin": nil], token: "t-alice", holding: 3)
        try server.push("pin", "p1", token: "t-alice")
        // Alice's wait is answered by the same wake-up that would have answered bob's.
        #expect(ChangeWaitServer.answers(try alice.readResponse(), changed: true))
        #expect(server.server.changeWaits.count(user: "bob") == 2)
        try server.push("pin", "p2", token: "t-bob")
        #expect(ChangeWaitServer.answers(try bob.readResponse(), changed: true))
        #expect(server.server.changeWaits.count(user: "bob") == 1, "bob's wait on notes is still held")
        _ = bobNotes
    }

    @Test("a push that commits while a new wait looks at storage (and finds nothing) answers that wait changed")
    func pushDuringTheLook() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-waits"); defer { directory.remove() }
        let storage = try LookHoldingStorage(path: directory.file("sync.sqlite"))
        var users = UserDirectory()
        try users.add(token: "t-alice", user: "alice")
        let registry = ChangeWaitRegistry()
        storage.observeChanges { registry.wake($0) }
        let server = HTTPServer(configuration: HTTPServerConfiguration(port: 0),
                                responder: SyncRouter(storage: storage, users: users, changeWaits: registry))
        try server.start()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        try client.send(ChangeWaitServer.waitRequest(["pin": nil], timeoutMilliseconds: 60_000))
        try #require(storage.entered.wait(timeout: .now() + 30) == .success, "the wait never looked at storage")
        _ = try storage.inner.push(user: "alice", [Mutations.create("p1")])
        storage.released.signal()
        #expect(ChangeWaitServer.answers(try client.readResponse(), changed: true))
        #expect(registry.count == 0)
    }

    @Test("a wait with nothing to report answers changed false once the server's cap passes, whatever it asked for", arguments: StorageBackend.tested)
    func timesOutAtTheCap(_ backend: StorageBackend) throws {
        let server = try ChangeWaitServer(backend, maximumWaitMilliseconds: 200)
        try server.push("pin", "p1", token: "t-alice")
        let bob = try server.openWait(["pin": nil], token: "t-bob", holding: 1)
        #expect(ChangeWaitServer.answers(try bob.readResponse(), changed: false))
        #expect(server.server.changeWaits.waitUntil(timeoutMilliseconds: ChangeWaitServer.patience) { $0 == 0 })
    }

    @Test("a wait whose connection closes is released, and a reset one too", arguments: StorageBackend.tested)
    func closedConnectionReleases(_ backend: StorageBackend) throws {
        let server = try ChangeWaitServer(backend)
        let closing = try server.openWait(["pin": nil], token: "t-alice", holding: 1)
        closing.finishSending()
        #expect(server.server.changeWaits.waitUntil(timeoutMilliseconds: ChangeWaitServer.patience) { $0 == 0 }, "an end of file drops the wait")
        let resetting = try server.openWait(["pin": nil], token: "t-alice", holding: 1)
        resetting.reset()
        #expect(server.server.changeWaits.waitUntil(timeoutMilliseconds: ChangeWaitServer.patience) { $0 == 0 }, "a reset drops the wait")
        // The user's allowance is whole again: a push still reaches a new wait.
        let waiting = try server.openWait(["pin": nil], token: "t-alice", holding: 1)
        try server.push("pin", "p1")
        #expect(ChangeWaitServer.answers(try waiting.readResponse(), changed: true))
    }

    @Test("a user holding the most waits gets 429 with Retry-After for one more; a wait without a token gets 401")
    func limits() throws {
        let server = try ChangeWaitServer(.sqlite, maximumWaitsPerUser: 2)
        let first = try server.openWait(["pin": nil], token: "t-alice", holding: 1)
        let second = try server.openWait(["pin": nil], token: "t-alice", holding: 2)
        let refused = try server.wait(["pin": nil], timeoutMilliseconds: 60_000)
        #expect(refused.status == 429)
        #expect(refused.header("Retry-After") == "1")
        #expect(try SyncServerFixture.error(refused).code == .tooManyRequests)
        #expect(ChangeWaitServer.answers(try server.wait(["pin": nil], timeoutMilliseconds: 0, token: "t-bob"), changed: false),
                "another user is not refused")
        let anonymous = try RawClient(port: server.port)
        try anonymous.send(SyncServerFixture.post(SyncEndpoint.wait.path,
                                                  body: ChangeWaitRequestCodec.encode(ChangeWaitRequest(cursors: ["pin": nil], timeoutMilliseconds: 0)),
                                                  token: nil))
        #expect(try anonymous.readResponse().status == 401)
        _ = (first, second)
    }

    @Test("a wait whose body is not a wait request is a 400; a bad cursor is bad_cursor")
    func badRequests() throws {
        let server = try ChangeWaitServer(.sqlite)
        let client = try RawClient(port: server.port)
        try client.send(SyncServerFixture.post(SyncEndpoint.wait.path, body: Array(#"{"cursors": {}, "timeoutMs": 10}"#.utf8), token: "t-alice"))
        #expect(try client.readResponse().status == 400)
        try client.send(SyncServerFixture.post(SyncEndpoint.wait.path, body: Array(#"{"cursors": {"pin": "x"}, "timeoutMs": 10}"#.utf8), token: "t-alice"))
        let bad = try client.readResponse()
        #expect(bad.status == 400)
        #expect(try SyncServerFixture.error(bad).code == .badCursor)
    }

    @Test("after changes that may have gone unheard, only the parked waits whose user has rows past their cursors are answered; the others stay held")
    func unknownChangeLooksAgain() throws {
        let server = try ChangeWaitServer(.sqlite)
        let alice = try server.openWait(["pin": nil], token: "t-alice", holding: 1)
        let bob = try server.openWait(["pin": nil], token: "t-bob", holding: 2)
        // A write the server does not hear of: another connection to its database.
        let other = try SQLiteStorage(path: server.databasePath)
        _ = try other.push(user: "alice", [Mutations.create("p1")])
        server.server.changeWaits.wake(.unknown)
        #expect(ChangeWaitServer.answers(try alice.readResponse(), changed: true))
        server.server.changeWaits.finishRechecks()
        #expect(server.server.changeWaits.count(user: "bob") == 1, "bob has nothing new: his wait is still held")
        try server.push("pin", "b1", token: "t-bob")
        #expect(ChangeWaitServer.answers(try bob.readResponse(), changed: true))
    }

    @Test("on PostgreSQL, a listening connection lost and made again leaves held the waits with nothing new, and a push after it still answers them",
          .enabled(if: PostgreSQLTestDatabase.shouldRun, PostgreSQLTestDatabase.skipReason))
    func lostListenerLooksAgain() throws {
        let server = try ChangeWaitServer(.postgres)
        let storage = try #require(server.server.storage as? PostgreSQLStorage)
        let listening = try #require(storage.changeListenerConnection)
        let alice = try server.openWait(["pin": nil], token: "t-alice", holding: 1)
        let bob = try server.openWait(["pin": nil], token: "t-bob", holding: 2)
        let admin = try PostgreSQLConnection(connection: try PostgreSQLTestDatabase.connection())
        try admin.execute("select pg_terminate_backend($1::int4, 10000)", [.int64(Int64(listening.process))])
        // Heard or not (the listener may be back by its notification), this push answers alice's wait.
        try server.push("pin", "p1", token: "t-alice")
        #expect(storage.waitForChangeListener(after: listening.number, timeoutMilliseconds: ChangeWaitServer.patience))
        #expect(ChangeWaitServer.answers(try alice.readResponse(), changed: true))
        server.server.changeWaits.finishRechecks()
        #expect(server.server.changeWaits.count(user: "bob") == 1, "bob has nothing new: his wait is still held")
        try server.push("pin", "b1", token: "t-bob")
        #expect(ChangeWaitServer.answers(try bob.readResponse(), changed: true), "the new listening connection hears pushes")
    }

    @Test("the server stopping answers its parked waits changed false")
    func stopAnswersParkedWaits() throws {
        let server = try ChangeWaitServer(.sqlite)
        let waiting = try server.openWait(["pin": nil], token: "t-alice", holding: 1)
        server.server.shutdown()
        #expect(ChangeWaitServer.answers(try waiting.readResponse(), changed: false))
    }

    @Test("two servers on one PostgreSQL database: a push through the first answers a wait held by the second",
          .enabled(if: PostgreSQLTestDatabase.shouldRun, PostgreSQLTestDatabase.skipReason))
    func acrossServers() throws {
        let first = try ChangeWaitServer(.postgres)
        let second = try first.sibling()
        let waiting = try second.openWait(["pin": nil], token: "t-alice", holding: 1)
        try first.push("pin", "p1")
        #expect(ChangeWaitServer.answers(try waiting.readResponse(), changed: true))
    }
}

import Foundation
import Testing
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync
import SyncJournalWire

@Suite("sync-server over loopback sockets")
struct SyncServerHTTPTests {
    let fixture: SyncServerFixture
    /// The row every test starts with, so each can check the data is intact after a bad request.
    let seed: ServerRow

    init() throws {
        fixture = try SyncServerFixture()
        let results = try fixture.push([Mutations.create("p1", ["title": .string("Crux"), "grade": .int(7)])])
        seed = try #require(results.first?.outcome.appliedRow)
    }

    func expectIntact(sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try fixture.pullAll() == [seed], sourceLocation: sourceLocation)
    }

    @Test("health answers without a token")
    func health() throws {
        let client = try RawClient(port: fixture.port)
        try client.send("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200 && response.text == #"{"status":"ok"}"#)
        #expect(response.header("content-type") == "application/json")
    }

    @Test("no token, an unknown token or another scheme is 401 unauthorized, and nothing is applied")
    func unauthorized() throws {
        let body = PushRequestCodec.encode([Mutations.create("p2")])
        for token in [nil, "t-mallory", "t-alice extra"] as [String?] {
            let response = try fixture.send("/v1/sync/push", body: body, token: token)
            #expect(response.status == 401)
            #expect(try SyncServerFixture.error(response).code == .unauthorized)
        }
        let client = try RawClient(port: fixture.port)
        try client.send("POST /v1/sync/pull HTTP/1.1\r\nHost: x\r\nAuthorization: Basic dC1hbGljZQ==\r\nContent-Length: 2\r\n\r\n{}")
        #expect(try client.readResponse().status == 401)
        try expectIntact()
    }

    @Test("garbage JSON is 400 bad_json, a wrong shape 400 bad_request, a bad cursor 400 bad_cursor; the data is intact")
    func badBodies() throws {
        let cases: [(String, String, ProtocolErrorCode)] = [
            ("/v1/sync/push", "{\"mutations\": [", .badJSON),
            ("/v1/sync/push", "\u{FF}\u{FE}garbage", .badJSON),
            ("/v1/sync/push", #"{"mutations": [], "mutations": []}"#, .badJSON),
            ("/v1/sync/push", #"{"mutation": []}"#, .badRequest),
            ("/v1/sync/push", #"[]"#, .badRequest),
            ("/v1/sync/pull", #"{"cursors": {"pin": "abc"}, "limit": 10, "resync": false}"#, .badCursor),
            ("/v1/sync/pull", #"{"cursors": {"pin": null}, "limit": 10001, "resync": false}"#, .badRequest),
            ("/v1/sync/read", #"{"kind": "pin"}"#, .badRequest),
        ]
        for (path, body, code) in cases {
            let response = try fixture.send(path, body: Array(body.utf8))
            #expect(response.status == 400, "\(body)")
            #expect(try SyncServerFixture.error(response).code == code, "\(body)")
        }
        try expectIntact()
    }

    @Test("another user's record is out of reach: an update of the same id is one of a record the user does not have, and the record stays unchanged")
    func anotherUsersRecord() throws {
        let results = try fixture.push([Mutations.update("p1", base: seed.updatedAt, ["title": .string("mine")])], token: "t-bob")
        #expect(results.first?.outcome == .conflict(server: nil))
        #expect(try fixture.pullAll(token: "t-bob").isEmpty)
        let read = try fixture.send("/v1/sync/read", body: ReadRequestCodec.encode(ReadRequest(kind: "pin", id: "p1")), token: "t-bob")
        #expect(try ReadReplyCodec.decode(read.body) == nil)
        try expectIntact()
    }

    @Test("more mutations than --max-batch, or a body over --max-body, is 413 too_large and nothing is applied")
    func tooLarge() throws {
        let four = (2...5).map { Mutations.create("p\($0)") }
        let response = try fixture.send("/v1/sync/push", body: PushRequestCodec.encode(four))
        #expect(response.status == 413)
        #expect(try SyncServerFixture.error(response).code == .tooLarge)
        let big = [Mutations.create("p2", ["blob": .bytes([UInt8](repeating: 7, count: 20_000))])]
        let bigResponse = try fixture.send("/v1/sync/push", body: PushRequestCodec.encode(big))
        #expect(bigResponse.status == 413)
        #expect(try SyncServerFixture.error(bigResponse).code == .tooLarge)
        try expectIntact()
    }

    @Test("the HTTP layer's refusals are JSON error bodies with the protocol's codes, and close the connection")
    func httpRefusalsAreJSON() throws {
        let cases: [(String, Int, ProtocolErrorCode)] = [
            ("GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 40_000))\r\n\r\n", 431, .headersTooLarge),
            ("GET /\(String(repeating: "a", count: 9_000)) HTTP/1.1\r\nHost: x\r\n\r\n", 414, .uriTooLong),
            ("POST /v1/sync/push HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411, .lengthRequired),
            ("POST /v1/sync/push HTTP/1.1\r\nHost: x\r\nContent-Length: 999999\r\n\r\n", 413, .tooLarge),
            ("GET /v1/health HTTP/3.0\r\nHost: x\r\n\r\n", 505, .httpVersionNotSupported),
            ("GET /v1/health HTTP/1.1\r\n\r\n", 400, .badRequest),
        ]
        for (raw, status, code) in cases {
            let client = try RawClient(port: fixture.port)
            try client.send(raw)
            let response = try client.readResponse()
            #expect(response.status == status)
            #expect(try SyncServerFixture.error(response).code == code)
            #expect(response.header("connection") == "close")
            #expect(try client.readsEndOfFile())
        }
        try expectIntact()
    }

    @Test("an unknown path is 404 and a wrong method 405 with Allow")
    func notFoundAndMethod() throws {
        #expect(try fixture.send("/v1/sync/everything", body: Array("{}".utf8)).status == 404)
        let client = try RawClient(port: fixture.port)
        try client.send("GET /v1/sync/push HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t-alice\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 405 && response.header("allow") == "POST")
        #expect(try SyncServerFixture.error(response).code == .methodNotAllowed)
    }

    @Test("a cursor behind a purged tombstone is 410 cursor_expired naming the kinds; a resync is served")
    func cursorExpired() throws {
        let cursor = PullCursor(updatedAt: seed.updatedAt, id: "p1")
        let deleted = try fixture.push([Mutations.delete("p1", base: seed.updatedAt)])
        let tombstone = try #require(deleted.first?.outcome.appliedRow)
        try fixture.server.storage.purgeTombstones(olderThan: tombstone.updatedAt + 1, kind: nil)
        let body = PullRequestCodec.encode(PullRequest(cursors: ["pin": cursor, "note": nil], limit: 10))
        let response = try fixture.send("/v1/sync/pull", body: body)
        #expect(response.status == 410)
        let error = try SyncServerFixture.error(response)
        #expect(error.code == .cursorExpired && error.kinds == ["pin"])
        let resync = PullRequestCodec.encode(PullRequest(cursors: ["pin": nil], limit: 10, isResync: true))
        let page = try PullPageCodec.decode(try fixture.send("/v1/sync/pull", body: resync).body)
        #expect(page.rows.isEmpty && page.nextCursors["pin"] == PullCursor(updatedAt: tombstone.updatedAt, id: "p1"))
    }

    @Test("a resent push gets byte-identical results and applies nothing twice")
    func resend() throws {
        let mutations = [Mutations.update("p1", base: seed.updatedAt, ["grade": .int(8)]), Mutations.create("p2")]
        let body = PushRequestCodec.encode(mutations)
        let first = try fixture.send("/v1/sync/push", body: body)
        let again = try fixture.send("/v1/sync/push", body: body)
        #expect(first.status == 200 && again.body == first.body)
        #expect(try fixture.pullAll().count == 2)
    }

    @Test("keep-alive: a push and a pull on one connection")
    func keepAlive() throws {
        let client = try RawClient(port: fixture.port)
        try client.send(SyncServerFixture.post("/v1/sync/push", body: PushRequestCodec.encode([Mutations.create("p2")]), token: "t-alice"))
        #expect(try client.readResponse().status == 200)
        try client.send(SyncServerFixture.post("/v1/sync/pull", body: PullRequestCodec.encode(PullRequest(cursors: ["pin": nil], limit: 10)),
                                               token: "t-alice"))
        let page = try PullPageCodec.decode(try client.readResponse().body)
        #expect(page.rows.map(\.id) == ["p1", "p2"])
    }

    @Test("pipelined garbage on one connection does not affect a concurrent good connection")
    func pipelinedGarbage() throws {
        let good = try RawClient(port: fixture.port)
        let bad = try RawClient(port: fixture.port)
        let push = PushRequestCodec.encode([Mutations.create("p2")])
        // A good request, a request with broken JSON, then bytes that are no request at all.
        try bad.send(SyncServerFixture.post("/v1/sync/push", body: push, token: "t-alice")
                     + SyncServerFixture.post("/v1/sync/push", body: Array("{\"mutations\":[{".utf8), token: "t-alice")
                     + Array("\u{0}\u{1}NOT HTTP\r\n\r\n".utf8))
        try good.send(SyncServerFixture.post("/v1/sync/push", body: PushRequestCodec.encode([Mutations.create("p3")]), token: "t-alice"))
        #expect(try bad.readResponse().status == 200)
        #expect(try bad.readResponse().status == 400)
        #expect(try bad.readResponse().status == 400)
        #expect(try bad.readsEndOfFile())
        #expect(try good.readResponse().status == 200)
        try good.send(SyncServerFixture.post("/v1/sync/pull", body: PullRequestCodec.encode(PullRequest(cursors: ["pin": nil], limit: 10)),
                                             token: "t-alice"))
        #expect(try PullPageCodec.decode(try good.readResponse().body).rows.map(\.id).sorted() == ["p1", "p2", "p3"], "the two connections raced: compare as a set")
    }

    @Test("concurrent pushes from several connections all apply, with distinct increasing stamps")
    func concurrentPushes() async throws {
        let port = fixture.port
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in 0..<10 {
                        let client = try RawClient(port: port)
                        let body = PushRequestCodec.encode([Mutations.create("w\(worker)-\(index)")])
                        try client.send(SyncServerFixture.post("/v1/sync/push", body: body, token: "t-alice"))
                        guard try client.readResponse().status == 200 else { throw RawClient.Failure(description: "push failed") }
                    }
                }
            }
            try await group.waitForAll()
        }
        let rows = try fixture.pullAll()
        #expect(rows.count == 41)
        #expect(Set(rows.map(\.updatedAt)).count == 41)
    }
}

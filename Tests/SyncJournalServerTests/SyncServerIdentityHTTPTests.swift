import Foundation
import Testing
import SyncJournalHTTP
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalWire

/// `sync-server`'s side of server identities over HTTP: every reply carries
/// `Sync-Server-Identity`, the request headers are read strictly, and a
/// refusal is a 409 `server_mismatch` whose body says what happened.
@Suite("sync-server: server identity over HTTP")
struct SyncServerIdentityHTTPTests {
    /// One request on a new connection, with extra header lines.
    static func send(_ fixture: SyncServerFixture, _ method: String, _ path: String, body: [UInt8] = [], token: String? = "t-alice",
                     headers: [String] = []) throws -> RawClient.Response {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.count)\r\n"
        if !body.isEmpty { head += "Content-Type: application/json\r\n" }
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        for header in headers { head += header + "\r\n" }
        let client = try RawClient(port: fixture.port)
        try client.send(Array((head + "\r\n").utf8) + body)
        return try client.readResponse()
    }

    static let pullBody = PullRequestCodec.encode(PullRequest(cursors: ["pin": nil], limit: 10))
    static func pushBody(_ id: String) -> [UInt8] {
        PushRequestCodec.encode([Mutation(operationID: .random(), kind: "pin", op: .create, recordID: id, fields: [:], baseUpdatedAt: nil)])
    }

    @Test("every reply carries the database's identity: health, push, pull, read, wait, and errors of every kind")
    func everyReplyIdentified() throws {
        let fixture = try SyncServerFixture()
        let identity = try #require(fixture.server.storage.identity).text
        let wait = ChangeWaitRequestCodec.encode(ChangeWaitRequest(cursors: ["pin": nil], timeoutMilliseconds: 1))
        let replies: [(String, RawClient.Response)] = [
            ("health", try Self.send(fixture, "GET", "/v1/health", token: nil)),
            ("push", try Self.send(fixture, "POST", "/v1/sync/push", body: Self.pushBody("p1"))),
            ("pull", try Self.send(fixture, "POST", "/v1/sync/pull", body: Self.pullBody)),
            ("read", try Self.send(fixture, "POST", "/v1/sync/read", body: ReadRequestCodec.encode(ReadRequest(kind: "pin", id: "p1")))),
            ("parked wait", try Self.send(fixture, "POST", "/v1/sync/wait",
                                         body: ChangeWaitRequestCodec.encode(ChangeWaitRequest(cursors: ["note": nil], timeoutMilliseconds: 1)))),
            ("wait answered at once", try Self.send(fixture, "POST", "/v1/sync/wait", body: wait)),
            ("401", try Self.send(fixture, "POST", "/v1/sync/pull", body: Self.pullBody, token: "nobody")),
            ("404", try Self.send(fixture, "GET", "/nowhere", token: nil)),
            ("405", try Self.send(fixture, "GET", "/v1/sync/pull")),
            ("400 body", try Self.send(fixture, "POST", "/v1/sync/pull", body: Array("{".utf8))),
            ("413 from the HTTP layer", try Self.send(fixture, "POST", "/v1/sync/push", body: Array(repeating: UInt8(ascii: " "), count: 20_000))),
            ("409", try Self.send(fixture, "POST", "/v1/sync/pull", body: Self.pullBody, headers: ["Sync-Server-Identity: someone-else"])),
        ]
        for (name, response) in replies {
            #expect(response.header("Sync-Server-Identity") == identity, "\(name): \(response.status) \(response.text)")
            #expect(response.headers.filter { $0.0.lowercased() == "sync-server-identity" }.count == 1, "\(name): once")
        }
        #expect(replies.map(\.1.status) == [200, 200, 200, 200, 200, 200, 401, 404, 405, 400, 413, 409])
    }

    @Test("malformed identity headers are refused 400 bad_request naming the header, before anything is applied")
    func malformedHeaders() throws {
        let fixture = try SyncServerFixture()
        let identity = try #require(fixture.server.storage.identity).text
        let cases: [([String], String)] = [
            (["Sync-Server-Identity: not an identity!"], "Sync-Server-Identity"),
            (["Sync-Server-Identity: \(String(repeating: "a", count: 65))"], "Sync-Server-Identity"),
            (["Sync-Server-Identity: \(identity)", "Sync-Server-Identity: \(identity)"], "Sync-Server-Identity"),
            (["Sync-Server-Identity: \(identity)", "Sync-Seen-Stamp: abc"], "Sync-Seen-Stamp"),
            (["Sync-Server-Identity: \(identity)", "Sync-Seen-Stamp: +5"], "Sync-Seen-Stamp"),
            (["Sync-Server-Identity: \(identity)", "Sync-Seen-Stamp: 99999999999999999999"], "Sync-Seen-Stamp"),
            (["Sync-Server-Identity: \(identity)", "Sync-Seen-Stamp: 1", "Sync-Seen-Stamp: 2"], "Sync-Seen-Stamp"),
            (["Sync-Seen-Stamp: 5"], "Sync-Seen-Stamp"),
        ]
        for (headers, named) in cases {
            for (path, body) in [("/v1/sync/push", Self.pushBody("p1")), ("/v1/sync/pull", Self.pullBody)] {
                let response = try Self.send(fixture, "POST", path, body: body, headers: headers)
                #expect(response.status == 400, "\(headers) on \(path)")
                let error = try ErrorBodyCodec.decode(response.body)
                #expect(error.code == .badRequest && error.message.contains(named), "\(headers): \(error.message)")
            }
        }
        #expect(try fixture.pullAll().isEmpty, "no malformed push applied")
    }

    @Test("a push to another server or one behind the device is a 409 whose body says which, nothing applied; the right expectation is served")
    func refusalsOverHTTP() throws {
        let fixture = try SyncServerFixture()
        let identity = try #require(fixture.server.storage.identity)
        let other = try SyncServerFixture()
        let otherIdentity = try #require(other.server.storage.identity)
        let different = try Self.send(fixture, "POST", "/v1/sync/push", body: Self.pushBody("p1"),
                                      headers: ["Sync-Server-Identity: \(otherIdentity)", "Sync-Seen-Stamp: 1"])
        #expect(different.status == 409)
        #expect(try ErrorBodyCodec.decode(different.body).mismatch == .differentServer(expected: otherIdentity, found: identity))
        #expect(try fixture.pullAll().isEmpty)

        _ = try fixture.push([Mutation(operationID: .random(), kind: "pin", op: .create, recordID: "p0", fields: [:], baseUpdatedAt: nil)])
        let latest = try #require(try fixture.pullAll().first?.updatedAt)
        let behind = try Self.send(fixture, "POST", "/v1/sync/pull", body: Self.pullBody,
                                   headers: ["Sync-Server-Identity: \(identity)", "Sync-Seen-Stamp: \(latest + 1_000)"])
        #expect(behind.status == 409)
        let body = try ErrorBodyCodec.decode(behind.body)
        #expect(body.mismatch == .behind(identity: identity, seenStamp: latest + 1_000, latestStamp: latest))
        #expect(body.code == .serverMismatch && body.seenStamp == latest + 1_000 && body.latestStamp == latest)

        let served = try Self.send(fixture, "POST", "/v1/sync/push", body: Self.pushBody("p2"),
                                   headers: ["Sync-Server-Identity: \(identity)", "Sync-Seen-Stamp: \(latest)"])
        #expect(served.status == 200)
        #expect(try fixture.pullAll().map(\.id).sorted() == ["p0", "p2"])
    }

    @Test("HTTPTransport against sync-server: pages carry the identity, a wrong expectation is a mismatch, none is served as before")
    func transportAgainstServer() async throws {
        let fixture = try SyncServerFixture()
        let identity = try #require(fixture.server.storage.identity)
        let transport = HTTPTransport(baseURL: URL(string: "http://127.0.0.1:\(fixture.port)")!, token: "t-alice")
        let create = Mutation(operationID: .random(), kind: "pin", op: .create, recordID: "p1", fields: [:], baseUpdatedAt: nil)
        _ = try await transport.push([create], expecting: ServerExpectation(identity: identity, seenStamp: nil))
        let page = try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10))
        #expect(page.server == identity)
        let stranger = ServerIdentity("stranger")!
        let refused: TransportError?
        do {
            _ = try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10, expectation: ServerExpectation(identity: stranger, seenStamp: nil)))
            refused = nil
        } catch {
            refused = error
        }
        #expect(refused == .serverMismatch(.differentServer(expected: stranger, found: identity)))
    }
}

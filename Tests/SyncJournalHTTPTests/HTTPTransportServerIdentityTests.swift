import Foundation
import SyncJournalHTTP
import SyncJournalProtocol
import SyncJournalTesting
import SyncJournalWire
import Testing

/// `Sync-Server-Identity` and `Sync-Seen-Stamp` on the wire, from the
/// client's side: sent only with an expectation, read from every page, a
/// 409 `server_mismatch` read into its case, an old server working as before.
@Suite("HTTPTransport: server identity and mismatches")
struct HTTPTransportServerIdentityTests {
    static let a = ServerIdentity("server-a")!
    static let b = ServerIdentity("server-b")!
    static let page = PullPage(rows: [], nextCursors: [:], hasMore: false)

    static func value(_ request: ScriptedHTTPResponder.Request?, _ name: String) -> String? { request?.header(name) }

    static func conflict(_ body: [UInt8]) -> ScriptedHTTPResponder.Reply {
        .respond(status: 409, headers: [("Content-Type", "application/json")], body: body)
    }

    @Test("an expectation goes out as both headers on push and pull; none without one; no stamp header without a seen stamp")
    func headersSent() async throws {
        let pushReply = ScriptedHTTPResponder.Reply.ok(PushReplyCodec.encode(HTTPTransportTests.results))
        let pullReply = ScriptedHTTPResponder.Reply.ok(PullPageCodec.encode(Self.page))
        let responder = try ScriptedHTTPResponder([pushReply, pushReply, pushReply, pullReply, pullReply])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        _ = try await transport.push(HTTPTransportTests.mutations, expecting: ServerExpectation(identity: Self.a, seenStamp: 1_764_000_000_123))
        _ = try await transport.push(HTTPTransportTests.mutations)
        _ = try await transport.push(HTTPTransportTests.mutations, expecting: ServerExpectation(identity: Self.a, seenStamp: nil))
        _ = try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10, expectation: ServerExpectation(identity: Self.b, seenStamp: -5)))
        _ = try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10))
        let requests = responder.requests
        #expect(requests.map { Self.value($0, "Sync-Server-Identity") } == ["server-a", nil, "server-a", "server-b", nil])
        #expect(requests.map { Self.value($0, "Sync-Seen-Stamp") } == ["1764000000123", nil, nil, "-5", nil])
    }

    @Test("a page carries the reply's identity; a server that sends none gives nil and works as before; a header that is no identity counts as none")
    func identityRead() async throws {
        let body = PullPageCodec.encode(Self.page)
        let responder = try ScriptedHTTPResponder([
            .respond(status: 200, headers: [("Content-Type", "application/json"), ("Sync-Server-Identity", "server-a")], body: body),
            .ok(body),
            .respond(status: 200, headers: [("Content-Type", "application/json"), ("Sync-Server-Identity", "not an identity!")], body: body),
        ])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        #expect(try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10)).server == Self.a)
        #expect(try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10)).server == nil)
        #expect(try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10)).server == nil)
    }

    @Test("a 409 server_mismatch is read into its case, on push and pull, with the details it carries")
    func mismatchClassified() async throws {
        let different = ServerMismatch.differentServer(expected: Self.a, found: Self.b)
        let behind = ServerMismatch.behind(identity: Self.a, seenStamp: 900, latestStamp: 700)
        let responder = try ScriptedHTTPResponder([
            Self.conflict(ErrorBodyCodec.encode(ErrorBody(mismatch: different))),
            Self.conflict(ErrorBodyCodec.encode(ErrorBody(mismatch: behind))),
        ])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        let expectation = ServerExpectation(identity: Self.a, seenStamp: 900)
        #expect(await HTTPTransportTests.transportError { () async throws(TransportError) in
            try await transport.push(HTTPTransportTests.mutations, expecting: expectation)
        } == .serverMismatch(different))
        #expect(await HTTPTransportTests.transportError { () async throws(TransportError) in
            try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10, expectation: expectation))
        } == .serverMismatch(behind))
    }

    @Test("a malformed 409 is a permanent error naming the reply, never a mismatch guessed and never a crash")
    func malformedConflicts() async throws {
        let bodies: [String] = [
            "",
            "not json",
            #"{"error":"server_mismatch","message":"m"}"#,
            #"{"error":"server_mismatch","message":"m","expected":"server-a"}"#,
            #"{"error":"server_mismatch","message":"m","found":"server-a","seenStamp":5}"#,
            #"{"error":"server_mismatch","message":"m","expected":"server-a","found":"no spaces allowed"}"#,
            #"{"error":"server_mismatch","message":"m","found":"server-a","seenStamp":"5","latestStamp":4}"#,
            #"{"error":"server_mismatch","message":"m","expected":"","found":"server-a"}"#,
            #"{"error":"conflict","message":"m"}"#,
            #"[1,2,3]"#,
        ]
        let responder = try ScriptedHTTPResponder(bodies.map { Self.conflict(Array($0.utf8)) })
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        for body in bodies {
            let error = await HTTPTransportTests.transportError { () async throws(TransportError) in
                try await transport.push(HTTPTransportTests.mutations, expecting: ServerExpectation(identity: Self.a, seenStamp: 1))
            }
            guard case .permanent(let reason)? = error else {
                Issue.record("\(body): \(String(describing: error))")
                continue
            }
            #expect(reason.contains("409"), "\(body): \(reason)")
        }
    }

    @Test("end to end over HTTP with the reference server: a reset, a restore and a swap are each refused with what happened, nothing applied")
    func endToEnd() async throws {
        let server = ReferenceServer(identity: Self.a)
        let other = ReferenceServer(identity: Self.b)
        let handler = ReferenceHTTPHandler(server: server, users: ["token-1": "u1"])
        let responder = try ScriptedHTTPResponder(handler: { await handler.reply($0) })
        defer { responder.stop() }
        let transport = HTTPTransport(baseURL: responder.baseURL, token: "token-1")
        let create = Mutation(operationID: .random(), kind: "pin", op: .create, recordID: "p1", fields: [:], baseUpdatedAt: nil)
        let backup = await server.snapshot()
        _ = try await transport.push([create])
        let page = try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10))
        #expect(page.server == Self.a)
        let seen = try #require(page.nextCursors["pin"]).updatedAt
        let expectation = ServerExpectation(identity: Self.a, seenStamp: seen)
        _ = try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10, expectation: expectation))

        await server.restore(backup)
        let second = Mutation(operationID: .random(), kind: "pin", op: .create, recordID: "p2", fields: [:], baseUpdatedAt: nil)
        #expect(await HTTPTransportTests.transportError { () async throws(TransportError) in
            try await transport.push([second], expecting: expectation)
        } == .serverMismatch(.behind(identity: Self.a, seenStamp: seen, latestStamp: await server.latestStamp)))
        #expect(await server.rows(user: "u1", kind: "pin").isEmpty)

        await server.restore(await other.snapshot())
        #expect(await HTTPTransportTests.transportError { () async throws(TransportError) in
            try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10, expectation: expectation))
        } == .serverMismatch(.differentServer(expected: Self.a, found: Self.b)))

        await server.reset(identity: nil)
        let old = try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10, expectation: expectation))
        #expect(old.server == nil, "a server without an identity ignores the headers")
    }
}

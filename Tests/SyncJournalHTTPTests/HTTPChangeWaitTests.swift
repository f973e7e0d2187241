import Foundation
import SyncJournalHTTP
import SyncJournalProtocol
import SyncJournalWire
import Testing

/// HTTPTransport's waits for changes against a scripted loopback responder.
@Suite("HTTP transport: waits for changes")
struct HTTPChangeWaitTests {
    @Test("a wait posts the cursors and the timeout with the token, and reads changed true as changed and false as timed out")
    func request() async throws {
        let responder = try ScriptedHTTPResponder([.ok(ChangeWaitReplyCodec.encode(changed: true)), .ok(ChangeWaitReplyCodec.encode(changed: false))])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        let cursors: [String: PullCursor?] = ["pin": PullCursor(updatedAt: 123, id: "p1"), "note": nil]
        #expect(try await transport.waitForChanges(after: cursors, timeout: .milliseconds(1_500)) == .changed)
        #expect(try await transport.waitForChanges(after: cursors, timeout: .seconds(30)) == .timedOut)
        let request = try #require(responder.requests.first)
        #expect(request.method == "POST" && request.path == "/v1/sync/wait")
        #expect(request.header("Authorization") == "Bearer \(HTTPTransportTests.token)")
        #expect(try ChangeWaitRequestCodec.decode(request.body) == ChangeWaitRequest(cursors: cursors, timeoutMilliseconds: 1_500))
    }

    @Test("a server older than the wait endpoint (404 or 405) means not supported; other failures are classified as for a pull")
    func olderServer() async throws {
        for status in [404, 405] {
            let responder = try ScriptedHTTPResponder([.respond(status: status, headers: [("Content-Type", "application/json")],
                                                                body: HTTPTransportTests.error(#"{"error":"not_found","message":"no"}"#))])
            defer { responder.stop() }
            #expect(try await HTTPTransportTests.transport(responder).waitForChanges(after: ["pin": nil], timeout: .seconds(5)) == .notSupported,
                    "\(status)")
        }
        let busy = try ScriptedHTTPResponder([.respond(status: 429, headers: [("Retry-After", "3")], body: HTTPTransportTests.error(#"{"error":"too_many_requests","message":"m"}"#))])
        defer { busy.stop() }
        let error = await HTTPTransportTests.transportError { () async throws(TransportError) in
            try await HTTPTransportTests.transport(busy).waitForChanges(after: ["pin": nil], timeout: .seconds(5))
        }
        #expect(error == .transient(reason: "HTTP 429 from /v1/sync/wait: too_many_requests (m)", retryAfter: .milliseconds(3_000)))
        let malformed = try ScriptedHTTPResponder([.ok(Array(#"{"changed":1}"#.utf8))])
        defer { malformed.stop() }
        let bad = await HTTPTransportTests.transportError { () async throws(TransportError) in
            try await HTTPTransportTests.transport(malformed).waitForChanges(after: ["pin": nil], timeout: .seconds(5))
        }
        guard case .transient? = bad else {
            Issue.record("a malformed reply is transient, got \(String(describing: bad))")
            return
        }
    }
}

import Foundation
import SyncJournalHTTP
import SyncJournalProtocol
import SyncJournalWire
import Testing

/// Hands out `t1`, `t2`, … and counts how often it was asked.
final class CountingTokenProvider: Sendable {
    private let asked = NSLock()
    nonisolated(unsafe) private var count = 0

    /// The next token.
    func next() -> String {
        asked.lock()
        defer { asked.unlock() }
        count += 1
        return "t\(count)"
    }

    /// Tokens handed out so far.
    var calls: Int {
        asked.lock()
        defer { asked.unlock() }
        return count
    }
}

/// A token provider that fails, as one does when the refresh token was revoked.
struct RevokedSession: Error {}

/// HTTPTransport's credentials: a token provider asked once per 401, one
/// retry with the fresh token, and `unauthorized` when that does not help.
@Suite("HTTP transport: token provider and 401")
struct HTTPAuthenticationTests {
    static let unauthorized = ScriptedHTTPResponder.Reply.respond(status: 401, body: Array(#"{"error":"unauthorized","message":"expired token"}"#.utf8))

    static func transportError<T>(_ operation: () async throws(TransportError) -> T) async -> TransportError? {
        do { _ = try await operation(); return nil } catch { return error }
    }

    @Test("a 401 asks the provider once for a fresh token and the request succeeds on its one retry, with the fresh token")
    func refreshedOnce() async throws {
        let page = PullPage(rows: [], nextCursors: [:], hasMore: false)
        let responder = try ScriptedHTTPResponder([Self.unauthorized, .ok(PullPageCodec.encode(page))])
        defer { responder.stop() }
        let tokens = CountingTokenProvider()
        let transport = HTTPTransport(baseURL: responder.baseURL, tokenProvider: { tokens.next() }, timeout: .seconds(20))
        let pulled = try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10))
        #expect(pulled == page)
        #expect(tokens.calls == 2, "the first token, then one fresh one")
        #expect(responder.requests.map { $0.header("Authorization") } == ["Bearer t1", "Bearer t2"])
    }

    @Test("a second 401 after the fresh token is unauthorized: two requests, the provider asked twice, no third try")
    func secondRefusalIsUnauthorized() async throws {
        let responder = try ScriptedHTTPResponder([Self.unauthorized, Self.unauthorized, Self.unauthorized])
        defer { responder.stop() }
        let tokens = CountingTokenProvider()
        let transport = HTTPTransport(baseURL: responder.baseURL, tokenProvider: { tokens.next() }, timeout: .seconds(20))
        let error = await Self.transportError { () async throws(TransportError) in
            try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10))
        }
        guard case .unauthorized(let reason) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(reason.contains("401"))
        #expect(tokens.calls == 2)
        #expect(responder.requests.count == 2)
    }

    @Test("a provider that throws is unauthorized and nothing is sent")
    func failingProvider() async throws {
        let responder = try ScriptedHTTPResponder([.ok([])])
        defer { responder.stop() }
        let transport = HTTPTransport(baseURL: responder.baseURL, tokenProvider: { throw RevokedSession() }, timeout: .seconds(20))
        let error = await Self.transportError { () async throws(TransportError) in
            try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10))
        }
        guard case .unauthorized = error else { Issue.record("\(String(describing: error))"); return }
        #expect(responder.requests.isEmpty)
    }

    @Test("a wait for changes asks the token provider too: one that throws is unauthorized without a request")
    func changeWaitWithFailingProvider() async throws {
        let responder = try ScriptedHTTPResponder([.ok([])])
        defer { responder.stop() }
        let transport = HTTPTransport(baseURL: responder.baseURL, tokenProvider: { throw RevokedSession() }, timeout: .seconds(20))
        let error = await Self.transportError { () async throws(TransportError) in
            try await transport.waitForChanges(after: ["pin": nil], timeout: .seconds(60))
        }
        guard case .unauthorized = error else { Issue.record("\(String(describing: error))"); return }
        #expect(responder.requests.isEmpty)
    }
}

import Foundation
import SyncJournalHTTP
import SyncJournalProtocol
import SyncJournalWire
import Testing

/// `queuedAt` against servers that know the member and servers older than it.
@Suite("HTTPTransport: a mutation's queuedAt and servers older than it")
struct HTTPTransportQueuedAtTests {
    static let mutations = HTTPTransportTests.mutations.enumerated().map { index, mutation in
        var dated = mutation
        dated.queuedAt = 1_764_000_000_000 + Int64(index)
        return dated
    }

    /// What a server of the previous version answers a push holding `queuedAt`.
    static let olderServerRefusal = ScriptedHTTPResponder.Reply.respond(
        status: 400, headers: [("Content-Type", "application/json")],
        body: ErrorBodyCodec.encode(ErrorBody(WireError.unknownMember(path: "$.mutations[0].queuedAt"))))

    static func queuedAtSent(_ request: ScriptedHTTPResponder.Request) throws -> [Int64?] {
        try PushRequestCodec.decode(request.body).map(\.queuedAt)
    }

    @Test("each mutation's queuedAt is pushed")
    func sent() async throws {
        let responder = try ScriptedHTTPResponder([.ok(PushReplyCodec.encode(HTTPTransportTests.results))])
        defer { responder.stop() }
        #expect(try await HTTPTransportTests.transport(responder).push(Self.mutations) == HTTPTransportTests.results)
        #expect(try Self.queuedAtSent(try #require(responder.requests.first)) == Self.mutations.map(\.queuedAt))
    }

    @Test("a server that refuses queuedAt as an unknown member gets the push again without it, and later pushes leave it out")
    func olderServer() async throws {
        let reply = ScriptedHTTPResponder.Reply.ok(PushReplyCodec.encode(HTTPTransportTests.results))
        let responder = try ScriptedHTTPResponder([Self.olderServerRefusal, reply, reply])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        #expect(try await transport.push(Self.mutations) == HTTPTransportTests.results)
        #expect(try await transport.push(Self.mutations) == HTTPTransportTests.results)
        let sent = try responder.requests.map(Self.queuedAtSent)
        #expect(sent == [Self.mutations.map(\.queuedAt), [nil, nil], [nil, nil]])
    }

    @Test("a 400 for anything else is not sent again")
    func otherRefusal() async throws {
        let refusal = ScriptedHTTPResponder.Reply.respond(
            status: 400, headers: [("Content-Type", "application/json")],
            body: ErrorBodyCodec.encode(ErrorBody(WireError.unknownMember(path: "$.mutations[0].colour"))))
        let responder = try ScriptedHTTPResponder([refusal, .ok(PushReplyCodec.encode(HTTPTransportTests.results))])
        defer { responder.stop() }
        let error = await HTTPTransportTests.transportError { () async throws(TransportError) in
            try await HTTPTransportTests.transport(responder).push(Self.mutations)
        }
        guard case .permanent? = error else { Issue.record("not permanent: \(String(describing: error))"); return }
        #expect(responder.requests.count == 1)
    }
}

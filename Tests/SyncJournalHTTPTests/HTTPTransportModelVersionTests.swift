import Foundation
import SyncJournalHTTP
import SyncJournalProtocol
import SyncJournalWire
import Testing

/// `modelVersion` against servers that know the member and servers older than it.
@Suite("HTTPTransport: model versions and servers older than them")
struct HTTPTransportModelVersionTests {
    static let mutations = HTTPTransportTests.mutations.enumerated().map { index, mutation in
        var versioned = mutation
        versioned.queuedAt = 1_764_000_000_000 + Int64(index)
        versioned.modelVersion = 2 + index
        return versioned
    }

    static func refusal(of member: String) -> ScriptedHTTPResponder.Reply {
        .respond(status: 400, headers: [("Content-Type", "application/json")],
                 body: ErrorBodyCodec.encode(ErrorBody(WireError.unknownMember(path: "$.mutations[0].\(member)"))))
    }

    static func sent(_ request: ScriptedHTTPResponder.Request) throws -> [(Int64?, Int?)] {
        try PushRequestCodec.decode(request.body).map { ($0.queuedAt, $0.modelVersion) }
    }

    @Test("each mutation's model version is pushed, and every request says the client reads rows' modelVersion")
    func sent() async throws {
        let responder = try ScriptedHTTPResponder([.ok(PushReplyCodec.encode(HTTPTransportTests.results))])
        defer { responder.stop() }
        #expect(try await HTTPTransportTests.transport(responder).push(Self.mutations) == HTTPTransportTests.results)
        let request = try #require(responder.requests.first)
        #expect(try PushRequestCodec.decode(request.body).map(\.modelVersion) == [2, 3])
        #expect(request.headers.contains { $0.name == "sync-row-members" && $0.value == "modelVersion" })
    }

    @Test("a server that refuses modelVersion, then queuedAt, as unknown members gets the push again without each, and later pushes leave both out")
    func olderServer() async throws {
        let reply = ScriptedHTTPResponder.Reply.ok(PushReplyCodec.encode(HTTPTransportTests.results))
        let responder = try ScriptedHTTPResponder([Self.refusal(of: "modelVersion"), Self.refusal(of: "queuedAt"), reply, reply])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        #expect(try await transport.push(Self.mutations) == HTTPTransportTests.results)
        #expect(try await transport.push(Self.mutations) == HTTPTransportTests.results)
        let sent = try responder.requests.map(Self.sent)
        #expect(sent.count == 4)
        #expect(sent.map { $0.map(\.1) } == [[2, 3], [nil, nil], [nil, nil], [nil, nil]])
        #expect(sent.map { $0.map(\.0) } == [[1_764_000_000_000, 1_764_000_000_001], [1_764_000_000_000, 1_764_000_000_001], [nil, nil], [nil, nil]])
    }
}

import Foundation
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalWire
import Testing

/// An operation id has one spelling on the wire (lowercase `8-4-4-4-12`
/// hex): clients match results to operations by its text, byte for byte.
@Suite("operation id spelling on sync-server")
struct OperationIDSpellingTests {
    static let lower = "6f1c2a4e-2b7d-4c1e-9a53-0d8e7f6a5b41"

    static func pushBody(_ id: String, record: String) -> [UInt8] {
        Array(#"{"mutations":[{"operationId":"\#(id)","kind":"pin","op":"create","recordId":"\#(record)","baseUpdatedAt":null,"fields":{"n":1}}]}"#.utf8)
    }

    static func send(_ server: ChangeWaitServer, _ path: String, _ body: [UInt8]) throws -> RawClient.Response {
        let client = try RawClient(port: server.port)
        try client.send(SyncServerFixture.post(path, body: body, token: "t-alice"))
        return try client.readResponse()
    }

    @Test("a push naming an operation id in uppercase is a 400 naming the member, and nothing of it is applied",
          arguments: StorageBackend.tested)
    func uppercaseRefused(_ backend: StorageBackend) throws {
        let server = try ChangeWaitServer(backend)
        let upper = Self.lower.uppercased()
        let response = try Self.send(server, SyncEndpoint.push.path, Self.pushBody(upper, record: "p1"))
        #expect(response.status == 400)
        let error = try SyncServerFixture.error(response)
        #expect(error.code == .badRequest)
        #expect(error.message.contains("$.mutations[0].operationId"), "\(error.message)")
        #expect(error.message.contains("lowercase"), "\(error.message)")
        let pull = try Self.send(server, SyncEndpoint.pull.path, PullRequestCodec.encode(PullRequest(cursors: ["pin": nil], limit: 10)))
        #expect(try PullPageCodec.decode(pull.body).rows.isEmpty)
    }

    @Test("a push's result names its operation id in exactly the bytes the push sent", arguments: StorageBackend.tested)
    func answeredUnderTheSentSpelling(_ backend: StorageBackend) throws {
        let server = try ChangeWaitServer(backend)
        for _ in 0..<2 {   // the first answer, then the answer to a resend
            let response = try Self.send(server, SyncEndpoint.push.path, Self.pushBody(Self.lower, record: "p1"))
            #expect(response.status == 200)
            guard case .object(let reply) = try JSONValue(parsing: response.body), case .array(let results)? = reply["results"],
                  case .object(let result)? = results.first else {
                Issue.record("not a push reply: \(response.text)")
                return
            }
            #expect(result["operationId"] == .string(Self.lower))
        }
    }
}

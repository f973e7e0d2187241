import Foundation
import Testing
import SyncJournalProtocol
import SyncJournalServer

/// The same request bytes, sent in the same order to `sync-server` over
/// SQLite and over PostgreSQL (in-process), get the same answers: status and
/// body, with stamps normalised. Valid requests and every kind of client
/// mistake alike, so neither backend can accept, refuse or fail differently.
@Suite("SQLite and PostgreSQL answer the same bytes the same",
       .enabled(if: PostgreSQLTestDatabase.shouldRun, PostgreSQLTestDatabase.skipReason))
struct BackendAgreementTests {
    /// One request: where it goes, whose token, its exact body.
    struct Request: CustomStringConvertible {
        var path: String
        var token: String
        var body: String
        var description: String { "\(path) \(token) \(body.prefix(160))" }
    }

    static func operation(_ number: Int) -> String {
        let digits = String(number)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - digits.count) + digits
    }

    static func mutation(_ number: Int, op: String = "create", kind: String = "pin", id: String, base: String = "null",
                         fields: String = #"{"title":"t"}"#) -> String {
        #"{"operationId":"\#(operation(number))","kind":"\#(kind)","op":"\#(op)","recordId":"\#(id)","baseUpdatedAt":\#(base),"fields":\#(fields)}"#
    }

    static func push(_ mutations: [String], token: String = "t-alice") -> Request {
        Request(path: "/v1/sync/push", token: token, body: #"{"mutations":[\#(mutations.joined(separator: ","))]}"#)
    }

    static func pull(_ cursors: String, limit: Int = 100, token: String = "t-alice") -> Request {
        Request(path: "/v1/sync/pull", token: token, body: #"{"cursors":{\#(cursors)},"limit":\#(limit),"resync":false}"#)
    }

    static func read(kind: String, id: String, token: String = "t-alice") -> Request {
        Request(path: "/v1/sync/read", token: token, body: #"{"kind":"\#(kind)","id":"\#(id)"}"#)
    }

    static func manyFields(_ count: Int) -> String {
        "{" + (0..<count).map { #""f\#($0)":\#($0)"# }.joined(separator: ",") + "}"
    }

    /// Valid requests and client mistakes, in the order they are sent (later ones see earlier ones' rows).
    static let requests: [Request] = [
        push([mutation(1, id: "p1"), mutation(2, id: "p2", fields: #"{"grade":7,"tags":{"set":["a","b"]}}"#)]),
        push([mutation(3, kind: NoiseText.of(count: 4_000), id: "long"), mutation(4, id: "p3")]),
        push([mutation(5, kind: String(repeating: "k", count: 128), id: "edge"), mutation(6, kind: String(repeating: "k", count: 129), id: "edge")]),
        push([mutation(7, id: String(repeating: "i", count: 64)), mutation(8, id: String(repeating: "i", count: 65))]),
        push([mutation(9, id: "nul\\u0000"), mutation(10, kind: "p\\u0000n", id: "x")]),
        push([mutation(11, id: "wide", fields: manyFields(256)), mutation(12, id: "wider", fields: manyFields(257))]),
        push([mutation(13, id: "name", fields: #"{"\#(String(repeating: "n", count: 129))":1}"#)]),
        push([mutation(14, id: "dup"), mutation(15, id: "dup2"), mutation(14, id: "dup3")]),
        push([mutation(16, op: "update", id: "p1", base: "1", fields: #"{"title":"u"}"#), mutation(17, op: "update", id: "none", base: "1")]),
        push([mutation(18, op: "delete", id: "ghost", base: "5", fields: "{}"), mutation(19, op: "delete", id: "ghost", base: "null", fields: "{}")]),
        push([mutation(20, id: "ghost")], token: "t-bob"),
        push([mutation(21, id: "p1")], token: "t-bob"),
        push([mutation(1, id: "p1"), mutation(22, id: "p1")]),
        push([mutation(23, id: "deep", fields: #"{"v":\#(String(repeating: #"{"array":["#, count: 11))1\#(String(repeating: "]}", count: 11))}"#)]),
        push([mutation(24, id: "bad", fields: #"{"a":1e999}"#)]),
        push([mutation(25, op: "delete", id: "p2", base: "1", fields: #"{"a":1}"#)]),
        Request(path: "/v1/sync/push", token: "t-alice", body: #"{"mutations":[}"#),
        pull(#""pin":null,"note":null"#),
        pull(#""pin":null"#, limit: 2),
        pull((0..<257).map { #""k\#($0)":null"# }.joined(separator: ",")),
        pull(#""\#(String(repeating: "k", count: 129))":null"#),
        pull(#""p\u0000n":null"#),
        pull(#""pin":"12:""#),
        pull(#""pin":null"#, limit: 0),
        pull(#""pin":null"#, token: "t-bob"),
        read(kind: "pin", id: "p1"),
        read(kind: "pin", id: "ghost"),
        read(kind: NoiseText.of(count: 4_000), id: "long"),
        read(kind: "pin", id: String(repeating: "i", count: 65)),
    ]

    /// The body with every stamp replaced by `S` (the backends issue their own).
    static func normalised(_ body: [UInt8]) -> String {
        var text = String(decoding: body, as: UTF8.self)
        for pattern in [#"("updatedAt":|"deletedAt":)-?[0-9]+"#, #"("[^"]*":")-?[0-9]+:"#] {
            text = text.replacingOccurrences(of: pattern, with: "$1S", options: .regularExpression)
        }
        return text
    }

    @Test("every request of the table gets the same status and body from both backends, and no answer is a 5xx")
    func sameAnswers() throws {
        let sqlite = try RoutedStorage(.sqlite)
        let postgres = try RoutedStorage(.postgres)
        var statuses: Set<Int> = []
        for request in Self.requests {
            let body = Array(request.body.utf8)
            let left = sqlite.post(request.path, body, token: request.token)
            let right = postgres.post(request.path, body, token: request.token)
            #expect(left.status == right.status, "\(request)")
            #expect(Self.normalised(left.body) == Self.normalised(right.body), "\(request)")
            #expect(left.status < 500, "\(request): \(Self.normalised(left.body).prefix(300))")
            statuses.insert(left.status)
        }
        // The table reaches every answer it means to compare.
        #expect(statuses == [200, 400])
    }
}

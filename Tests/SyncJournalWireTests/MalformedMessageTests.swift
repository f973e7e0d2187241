import Foundation
import SyncJournalProtocol
import SyncJournalWire
import Testing

@Suite("Protocol messages: malformed bodies fail with typed errors")
struct MalformedMessageTests {
    static let id1 = "01010203-0405-4607-8809-0a0b0c0d0e01"
    static func mutation(_ members: String) -> [UInt8] { bytes(#"{"mutations":[{\#(members)}]}"#) }
    static let goodMutation = #""operationId":"\#(id1)","kind":"pin","op":"update","recordId":"p1","baseUpdatedAt":5,"fields":{"a":1}"#

    @Test("push requests: unknown, missing and mistyped members, bad ids, ops and record ids")
    func pushRequests() throws {
        #expect(try PushRequestCodec.decode(Self.mutation(Self.goodMutation)).count == 1)
        let cases: [(String, WireError)] = [
            (Self.goodMutation + #","extra":1"#, .unknownMember(path: "$.mutations[0].extra")),
            (Self.goodMutation.replacingOccurrences(of: #","kind":"pin""#, with: ""), .missingMember(path: "$.mutations[0].kind")),
            (Self.goodMutation.replacingOccurrences(of: #","baseUpdatedAt":5"#, with: ""), .missingMember(path: "$.mutations[0].baseUpdatedAt")),
            (Self.goodMutation.replacingOccurrences(of: #""baseUpdatedAt":5"#, with: #""baseUpdatedAt":5.0"#),
             .wrongType(path: "$.mutations[0].baseUpdatedAt", expected: "an integer or null")),
            (Self.goodMutation.replacingOccurrences(of: #""baseUpdatedAt":5"#, with: #""baseUpdatedAt":"5""#),
             .wrongType(path: "$.mutations[0].baseUpdatedAt", expected: "an integer or null")),
            (Self.goodMutation.replacingOccurrences(of: #""kind":"pin""#, with: #""kind":"""#), .invalidValue(path: "$.mutations[0].kind", reason: "empty")),
            (Self.goodMutation.replacingOccurrences(of: #""kind":"pin""#, with: #""kind":7"#), .wrongType(path: "$.mutations[0].kind", expected: "a string")),
            (Self.goodMutation.replacingOccurrences(of: #""op":"update""#, with: #""op":"upsert""#),
             .invalidValue(path: "$.mutations[0].op", reason: "\"upsert\" is not create, update or delete")),
            (Self.goodMutation.replacingOccurrences(of: #""op":"update""#, with: #""op":"Update""#),
             .invalidValue(path: "$.mutations[0].op", reason: "\"Update\" is not create, update or delete")),
            (Self.goodMutation.replacingOccurrences(of: #""op":"update""#, with: #""op":"delete""#),
             .invalidValue(path: "$.mutations[0].fields", reason: "a delete carries no fields")),
            (Self.goodMutation.replacingOccurrences(of: Self.id1, with: "not-an-id"),
             .invalidValue(path: "$.mutations[0].operationId", reason: "\"not-an-id\" is not an operation id (8-4-4-4-12 hex)")),
            (Self.goodMutation.replacingOccurrences(of: #""recordId":"p1""#, with: #""recordId":"""#), .invalidValue(path: "$.mutations[0].recordId", reason: "empty")),
            (Self.goodMutation.replacingOccurrences(of: #""fields":{"a":1}"#, with: #""fields":[]"#), .wrongType(path: "$.mutations[0].fields", expected: "an object of fields")),
            (Self.goodMutation.replacingOccurrences(of: #""fields":{"a":1}"#, with: #""fields":{"a":1e999}"#), .numberOutOfRange(offset: 143)),
            (Self.goodMutation.replacingOccurrences(of: #""fields":{"a":1}"#, with: #""fields":{"a":99999999999999999999}"#), .integerOutOfRange(offset: 143)),
            (Self.goodMutation.replacingOccurrences(of: #""baseUpdatedAt":5"#, with: #""baseUpdatedAt":-9223372036854775809"#), .integerOutOfRange(offset: 127)),
        ]
        for (members, expected) in cases {
            #expect(wireError { try PushRequestCodec.decode(Self.mutation(members)) } == expected, "\(members)")
        }
        let topLevel: [(String, WireError)] = [
            ("[]", .wrongType(path: "$", expected: "an object")),
            ("{}", .missingMember(path: "$.mutations")),
            (#"{"mutations":{}}"#, .wrongType(path: "$.mutations", expected: "an array")),
            (#"{"mutations":[],"mutations":[]}"#, .duplicateMember(name: "mutations", offset: 16)),
            (#"{"mutations":[],"Mutations":[]}"#, .unknownMember(path: "$.Mutations")),
            (#"{"mutations":[1]}"#, .wrongType(path: "$.mutations[0]", expected: "an object")),
            (#"{"mutations":[{}]}"#, .missingMember(path: "$.mutations[0].operationId")),
        ]
        for (text, expected) in topLevel {
            #expect(wireError { try PushRequestCodec.decode(bytes(text)) } == expected, "\(text)")
        }
    }

    @Test("push replies: each status allows only its own members, all of them required")
    func pushReplies() {
        func reply(_ members: String) -> [UInt8] { bytes(#"{"results":[{"operationId":"\#(Self.id1)",\#(members)}]}"#) }
        let row = #"{"kind":"pin","id":"p1","fields":{},"updatedAt":1,"deletedAt":null}"#
        let cases: [(String, WireError)] = [
            (#""status":"applied""#, .missingMember(path: "$.results[0].row")),
            (#""status":"applied","row":null"#, .wrongType(path: "$.results[0].row", expected: "an object")),
            (#""status":"applied","row":\#(row),"server":null"#, .unknownMember(path: "$.results[0].server")),
            (#""status":"conflict""#, .missingMember(path: "$.results[0].server")),
            (#""status":"rejected","reason":"x""#, .missingMember(path: "$.results[0].permanent")),
            (#""status":"rejected","reason":"x","permanent":"yes""#, .wrongType(path: "$.results[0].permanent", expected: "a boolean")),
            (#""status":"duplicate","row":\#(row)"#, .unknownMember(path: "$.results[0].row")),
            (#""status":"nomatch""#, .invalidValue(path: "$.results[0].status", reason: "\"nomatch\" is not applied, conflict, rejected, duplicate or noMatch")),
            (#""state":"applied""#, .unknownMember(path: "$.results[0].state")),
            (#""status":"applied","row":{"kind":"pin","id":"p1","fields":{},"updatedAt":1}"#, .missingMember(path: "$.results[0].row.deletedAt")),
            (#""status":"applied","row":{"kind":"pin","id":"p1","fields":{},"updatedAt":1.5,"deletedAt":null}"#,
             .wrongType(path: "$.results[0].row.updatedAt", expected: "an integer")),
            (#""status":"applied","row":{"kind":"pin","id":"","fields":{},"updatedAt":1,"deletedAt":null}"#,
             .invalidValue(path: "$.results[0].row.id", reason: "empty")),
            (#""status":"applied","row":{"kind":"pin","id":"p","fields":{"":1},"updatedAt":1,"deletedAt":null}"#,
             .invalidValue(path: #"$.results[0].row.fields[""]"#, reason: "an empty field name")),
        ]
        for (members, expected) in cases {
            #expect(wireError { try PushReplyCodec.decode(reply(members)) } == expected, "\(members)")
        }
        #expect(wireError { try PushReplyCodec.decode(bytes(#"{"results":[{"status":"noMatch"}]}"#)) } == .missingMember(path: "$.results[0].operationId"))
    }

    @Test("pull requests: limits outside 1...10,000, bad cursors, wrong types")
    func pullRequests() throws {
        func request(_ cursors: String, limit: String = "10", resync: String = "false") -> [UInt8] {
            bytes(#"{"cursors":\#(cursors),"limit":\#(limit),"resync":\#(resync)}"#)
        }
        #expect(try PullRequestCodec.decode(request("{}", limit: "10000")).limit == 10_000)
        let cases: [([UInt8], WireError)] = [
            (request("{}", limit: "0"), .invalidValue(path: "$.limit", reason: "0 is not 1 to 10000")),
            (request("{}", limit: "10001"), .invalidValue(path: "$.limit", reason: "10001 is not 1 to 10000")),
            (request("{}", limit: "-1"), .invalidValue(path: "$.limit", reason: "-1 is not 1 to 10000")),
            (request("{}", limit: "10.0"), .wrongType(path: "$.limit", expected: "an integer")),
            (request("{}", limit: "1e2"), .wrongType(path: "$.limit", expected: "an integer")),
            (request("{}", resync: "0"), .wrongType(path: "$.resync", expected: "a boolean")),
            (request("[]"), .wrongType(path: "$.cursors", expected: "an object")),
            (request(#"{"pin":"abc"}"#), .badCursor(path: "$.cursors.pin", text: "abc")),
            (request(#"{"pin":":p1"}"#), .badCursor(path: "$.cursors.pin", text: ":p1")),
            (request(#"{"pin":12}"#), .wrongType(path: "$.cursors.pin", expected: "a cursor string or null")),
            (request(#"{"":null}"#), .invalidValue(path: #"$.cursors[""]"#, reason: "an empty kind")),
            (bytes(#"{"cursors":{},"limit":10}"#), .missingMember(path: "$.resync")),
            (bytes(#"{"cursors":{},"limit":10,"resync":false,"since":0}"#), .unknownMember(path: "$.since")),
        ]
        for (body, expected) in cases {
            #expect(wireError { try PullRequestCodec.decode(body) } == expected, "\(String(decoding: body, as: UTF8.self))")
        }
    }

    @Test("pull pages, read replies and error bodies: wrong shapes are refused")
    func repliesOfOtherMessages() {
        let cases: [(() throws -> Any, WireError)] = [
            ({ () throws in try PullPageCodec.decode(bytes(#"{"rows":[],"nextCursors":{"pin":null},"hasMore":false}"#)) },
             .wrongType(path: "$.nextCursors.pin", expected: "a cursor string")),
            ({ () throws in try PullPageCodec.decode(bytes(#"{"rows":[],"nextCursors":{"pin":"x"},"hasMore":false}"#)) },
             .badCursor(path: "$.nextCursors.pin", text: "x")),
            ({ () throws in try PullPageCodec.decode(bytes(#"{"rows":[],"nextCursors":{}}"#)) }, .missingMember(path: "$.hasMore")),
            ({ () throws in try PullPageCodec.decode(bytes(#"{"rows":[null],"nextCursors":{},"hasMore":true}"#)) },
             .wrongType(path: "$.rows[0]", expected: "an object")),
            ({ () throws in try ReadReplyCodec.decode(bytes(#"{}"#)) as Any }, .missingMember(path: "$.row")),
            ({ () throws in try ReadReplyCodec.decode(bytes(#"{"row":[]}"#)) as Any }, .wrongType(path: "$.row", expected: "an object")),
            ({ () throws in try ReadRequestCodec.decode(bytes(#"{"kind":"pin"}"#)) }, .missingMember(path: "$.id")),
            ({ () throws in try ErrorBodyCodec.decode(bytes(#"{"error":"x"}"#)) }, .missingMember(path: "$.message")),
            ({ () throws in try ErrorBodyCodec.decode(bytes(#"{"error":"x","message":"m","kinds":[1]}"#)) },
             .wrongType(path: "$.kinds[0]", expected: "a non-empty kind")),
            ({ () throws in try ErrorBodyCodec.decode(bytes(#"{"error":"x","message":"m","detail":1}"#)) }, .unknownMember(path: "$.detail")),
        ]
        for (decode, expected) in cases {
            #expect(wireError(decode) == expected)
        }
    }

    @Test("every truncation of every sample body fails with a typed error and never crashes")
    func truncations() {
        let mutations = Array(sampleMutations.prefix(3))
        let answering = sampleResults.prefix(3).map {
            Mutation(operationID: $0.operationID, kind: "pin", op: .update, recordID: "p1", fields: [:], baseUpdatedAt: 1)
        }
        let bodies: [(String, [UInt8], ([UInt8]) throws -> Void)] = [
            ("push request", PushRequestCodec.encode(mutations), { (b) throws in _ = try PushRequestCodec.decode(b) }),
            ("push reply", PushReplyCodec.encode(Array(sampleResults.prefix(3))), { (b) throws in _ = try PushReplyCodec.decode(b, answering: answering) }),
            ("pull request", PullRequestCodec.encode(sampleRequest), { (b) throws in _ = try PullRequestCodec.decode(b) }),
            ("pull page", PullPageCodec.encode(samplePage), { (b) throws in _ = try PullPageCodec.decode(b) }),
            ("read request", ReadRequestCodec.encode(ReadRequest(kind: "pin", id: "p1")), { (b) throws in _ = try ReadRequestCodec.decode(b) }),
            ("read reply", ReadReplyCodec.encode(sampleRow), { (b) throws in _ = try ReadReplyCodec.decode(b) }),
            ("error", ErrorBodyCodec.encode(ErrorBody(code: .cursorExpired, message: "m", kinds: ["pin"])), { (b) throws in _ = try ErrorBodyCodec.decode(b) }),
        ]
        for (name, body, decode) in bodies {
            #expect(wireError { () throws in try decode(body) } == nil, "\(name) decodes whole")
            var failures = 0
            for length in 0..<body.count {
                // A prefix that ends in whitespace-free JSON may still be a
                // complete value only at full length: every shorter one fails.
                if wireError({ () throws in try decode(Array(body[..<length])) }) != nil { failures += 1 }
            }
            #expect(failures == body.count, "\(name): \(body.count - failures) truncations decoded")
        }
    }

    @Test("every single-byte corruption of a push reply either decodes or fails with a typed error")
    func corruptions() {
        let body = PushReplyCodec.encode(Array(sampleResults.prefix(4)))
        var decoded = 0, failed = 0
        for index in body.indices {
            for replacement: UInt8 in [0x00, 0x22, 0x2C, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x30, 0x3A, 0x80, 0xFF] where body[index] != replacement {
                var corrupt = body
                corrupt[index] = replacement
                if wireError({ () throws in try PushReplyCodec.decode(corrupt) }) == nil { decoded += 1 } else { failed += 1 }
            }
        }
        #expect(failed > 0)
        #expect(decoded + failed > body.count * 10)
    }
}

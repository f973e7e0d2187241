import SyncJournalProtocol
import SyncJournalWire
import Testing

@Suite("Protocol messages: round trips and PROTOCOL.md's examples")
struct MessageCodecTests {
    @Test("a push request round-trips, every field value case included, and re-encodes to the same bytes")
    func pushRequest() throws {
        let body = PushRequestCodec.encode(sampleMutations)
        let back = try PushRequestCodec.decode(body)
        #expect(back == sampleMutations)
        #expect(PushRequestCodec.encode(back) == body)
        #expect(try PushRequestCodec.decode(PushRequestCodec.encode([])) == [])
    }

    @Test("a push reply round-trips with every outcome, and decodes against the mutations it answers")
    func pushReply() throws {
        let body = PushReplyCodec.encode(sampleResults)
        #expect(try PushReplyCodec.decode(body) == sampleResults)
        #expect(PushReplyCodec.encode(try PushReplyCodec.decode(body)) == body)
        let mutations = sampleResults.map {
            Mutation(operationID: $0.operationID, kind: "pin", op: .update, recordID: "p1", fields: [:], baseUpdatedAt: 1)
        }
        #expect(try PushReplyCodec.decode(body, answering: mutations) == sampleResults)
    }

    @Test("a push reply with another result count or another operation's result is refused")
    func pushReplyValidation() throws {
        let body = PushReplyCodec.encode(Array(sampleResults.prefix(3)))
        let three = Array(sampleMutations.prefix(3))
        #expect(wireError { try PushReplyCodec.decode(PushReplyCodec.encode(Array(sampleResults.prefix(2))), answering: three) }
            == .resultCountMismatch(expected: 3, received: 2))
        #expect(wireError { try PushReplyCodec.decode(body, answering: Array(three.prefix(2))) } == .resultCountMismatch(expected: 2, received: 3))
        #expect(wireError { try PushReplyCodec.decode(PushReplyCodec.encode([]), answering: three) } == .resultCountMismatch(expected: 3, received: 0))
        let reordered = [three[0], three[2], three[1]]
        #expect(wireError { try PushReplyCodec.decode(body, answering: reordered) }
            == .resultForAnotherOperation(path: "$.results[1]", expected: operationID(3), received: operationID(2)))
        #expect(try PushReplyCodec.decode(body, answering: three).count == 3)
    }

    @Test("a pull request round-trips with cursors, null cursors and the resync flag")
    func pullRequest() throws {
        let body = PullRequestCodec.encode(sampleRequest)
        #expect(try PullRequestCodec.decode(body) == sampleRequest)
        #expect(PullRequestCodec.encode(try PullRequestCodec.decode(body)) == body)
        let plain = PullRequest(cursors: ["pin": nil], limit: 1)
        #expect(String(decoding: PullRequestCodec.encode(plain), as: UTF8.self) == #"{"cursors":{"pin":null},"limit":1,"resync":false}"#)
        #expect(try PullRequestCodec.decode(PullRequestCodec.encode(plain)) == plain)
    }

    @Test("a pull page round-trips rows, tombstones and cursors whose ids hold colons")
    func pullPage() throws {
        let body = PullPageCodec.encode(samplePage)
        #expect(try PullPageCodec.decode(body) == samplePage)
        #expect(PullPageCodec.encode(try PullPageCodec.decode(body)) == body)
        let empty = PullPage(rows: [], nextCursors: [:], hasMore: false)
        #expect(try PullPageCodec.decode(PullPageCodec.encode(empty)) == empty)
    }

    @Test("a read request and its reply round-trip, a missing row as null")
    func read() throws {
        let request = ReadRequest(kind: "pin", id: "p:1 ü")
        #expect(try ReadRequestCodec.decode(ReadRequestCodec.encode(request)) == request)
        #expect(try ReadReplyCodec.decode(ReadReplyCodec.encode(sampleRow)) == sampleRow)
        #expect(try ReadReplyCodec.decode(ReadReplyCodec.encode(nil)) == nil)
        #expect(String(decoding: ReadReplyCodec.encode(nil), as: UTF8.self) == #"{"row":null}"#)
    }

    @Test("an error body round-trips with and without kinds, and keeps codes it does not know")
    func errorBody() throws {
        let expired = ErrorBody(code: .cursorExpired, message: "pull again", kinds: ["pin", "note"])
        #expect(try ErrorBodyCodec.decode(ErrorBodyCodec.encode(expired)) == expired)
        let plain = ErrorBody(code: .unauthorized, message: "no token")
        #expect(String(decoding: ErrorBodyCodec.encode(plain), as: UTF8.self) == #"{"error":"unauthorized","message":"no token"}"#)
        #expect(try ErrorBodyCodec.decode(ErrorBodyCodec.encode(plain)) == plain)
        #expect(try ErrorBodyCodec.decode(bytes(#"{"error":"teapot","message":""}"#)) == ErrorBody(code: ProtocolErrorCode(rawValue: "teapot"), message: ""))
    }

    @Test("PROTOCOL.md's push example decodes to the mutations and results it describes")
    func protocolPushExample() throws {
        let request = """
        {"mutations": [
          {"operationId": "6f1c2a4e-2b7d-4c1e-9a53-0d8e7f6a5b41", "kind": "pin", "op": "create",
           "recordId": "p1", "baseUpdatedAt": null, "fields": {"title": "Crux", "grade": 7}},
          {"operationId": "0b6a9f5e-8c1d-4f2a-b3e4-5d6c7b8a9f01", "kind": "pin", "op": "update",
           "recordId": "p2", "baseUpdatedAt": 1764000000100, "fields": {"grade": 8}},
          {"operationId": "c3d4e5f6-a7b8-4c9d-8e0f-112233445566", "kind": "pin", "op": "delete",
           "recordId": "p3", "baseUpdatedAt": 1764000000090, "fields": {}}
        ]}
        """
        let mutations = try PushRequestCodec.decode(bytes(request))
        #expect(mutations.map(\.op) == [.create, .update, .delete])
        #expect(mutations[0].operationID == OperationID("6f1c2a4e-2b7d-4c1e-9a53-0d8e7f6a5b41"))
        #expect(mutations[0].fields == ["title": .string("Crux"), "grade": .int(7)])
        #expect(mutations[0].baseUpdatedAt == nil)
        #expect(mutations[1].baseUpdatedAt == 1_764_000_000_100)
        let reply = """
        {"results": [
          {"operationId": "6f1c2a4e-2b7d-4c1e-9a53-0d8e7f6a5b41", "status": "applied",
           "row": {"kind": "pin", "id": "p1", "fields": {"title": "Crux", "grade": 7}, "updatedAt": 1764000000200, "deletedAt": null}},
          {"operationId": "0b6a9f5e-8c1d-4f2a-b3e4-5d6c7b8a9f01", "status": "conflict",
           "server": {"kind": "pin", "id": "p2", "fields": {"grade": 9}, "updatedAt": 1764000000150, "deletedAt": null}},
          {"operationId": "c3d4e5f6-a7b8-4c9d-8e0f-112233445566", "status": "rejected",
           "reason": "forbidden: pin/p3 belongs to another user", "permanent": true}
        ]}
        """
        let results = try PushReplyCodec.decode(bytes(reply), answering: mutations)
        #expect(results[0].outcome == .applied(ServerRow(kind: "pin", id: "p1", fields: ["title": .string("Crux"), "grade": .int(7)], updatedAt: 1_764_000_000_200)))
        #expect(results[1].outcome == .conflict(server: ServerRow(kind: "pin", id: "p2", fields: ["grade": .int(9)], updatedAt: 1_764_000_000_150)))
        #expect(results[2].outcome == .rejected(reason: "forbidden: pin/p3 belongs to another user", permanent: true))
    }

    @Test("PROTOCOL.md's pull and read examples decode")
    func protocolPullAndReadExamples() throws {
        let request = try PullRequestCodec.decode(bytes(#"{"cursors": {"pin": "1764000000123:p1", "note": null}, "limit": 500, "resync": false}"#))
        #expect(request == PullRequest(cursors: ["pin": PullCursor(updatedAt: 1_764_000_000_123, id: "p1"), "note": nil], limit: 500))
        let page = try PullPageCodec.decode(bytes("""
        {"rows": [
          {"kind": "pin", "id": "p4", "fields": {"title": "Arete"}, "updatedAt": 1764000000130, "deletedAt": null},
          {"kind": "pin", "id": "p2", "fields": {}, "updatedAt": 1764000000131, "deletedAt": 1764000000131}
         ],
         "nextCursors": {"pin": "1764000000131:p2"},
         "hasMore": false}
        """))
        #expect(page.rows.count == 2 && page.rows[1].isTombstone && !page.hasMore)
        #expect(page.nextCursors == ["pin": PullCursor(updatedAt: 1_764_000_000_131, id: "p2")])
        #expect(try ReadRequestCodec.decode(bytes(#"{"kind": "pin", "id": "p1"}"#)) == ReadRequest(kind: "pin", id: "p1"))
        let row = try ReadReplyCodec.decode(bytes(#"{"row": {"kind": "pin", "id": "p1", "fields": {"title": "Crux"}, "updatedAt": 1764000000200, "deletedAt": null}}"#))
        #expect(row == ServerRow(kind: "pin", id: "p1", fields: ["title": .string("Crux")], updatedAt: 1_764_000_000_200))
    }

    @Test("cursors: the id is everything after the first colon; malformed ones are bad_cursor")
    func cursors() throws {
        #expect(try PullCursorCodec.decode("1764000000123:p1", at: "$") == PullCursor(updatedAt: 1_764_000_000_123, id: "p1"))
        #expect(try PullCursorCodec.decode("0:a:b", at: "$") == PullCursor(updatedAt: 0, id: "a:b"))
        #expect(try PullCursorCodec.decode("-9223372036854775808:x", at: "$") == PullCursor(updatedAt: .min, id: "x"))
        #expect(try PullCursorCodec.decode("9223372036854775807::", at: "$") == PullCursor(updatedAt: .max, id: ":"))
        for bad in ["abc", "12", ":p1", "12:", "9223372036854775808:p1", "-9223372036854775809:p", "+1:p", "01:p", "-0:p", "-:p",
                    " 1:p", "1 :p", "1.5:p", "0x10:p", "1:" + String(repeating: "a", count: 65), ""] {
            let error = wireError { try PullCursorCodec.decode(bad, at: "$.cursors.pin") }
            #expect(error == .badCursor(path: "$.cursors.pin", text: bad), "\(bad)")
            #expect(error?.errorCode == .badCursor)
        }
        #expect(PullCursorCodec.encode(PullCursor(updatedAt: -3, id: "a:b")) == "-3:a:b")
    }
}

@Suite("Wire errors: what a server answers with")
struct WireErrorMappingTests {
    @Test("syntax errors are bad_json, shape errors bad_request, cursors bad_cursor, all 400; an oversized body is 413 too_large")
    func codesAndStatuses() {
        let cases: [(WireError, ProtocolErrorCode, Int)] = [
            (.duplicateMember(name: "a", offset: 3), .badJSON, 400),
            (.unexpectedEnd(offset: 0), .badJSON, 400),
            (.integerOutOfRange(offset: 1), .badJSON, 400),
            (.unknownMember(path: "$.x"), .badRequest, 400),
            (.invalidValue(path: "$.limit", reason: "0"), .badRequest, 400),
            (.badCursor(path: "$.cursors.pin", text: "abc"), .badCursor, 400),
            (.tooLarge(byteCount: 10, limit: 5), .tooLarge, 413),
        ]
        for (error, code, status) in cases {
            #expect(error.errorCode == code)
            #expect(error.httpStatus == status)
            #expect(ErrorBody(error) == ErrorBody(code: code, message: error.description))
        }
        #expect(WireError.duplicateMember(name: "a", offset: 3).offset == 3)
        #expect(WireError.unknownMember(path: "$.x").path == "$.x")
        #expect(WireError.unknownMember(path: "$.x").offset == nil)
    }
}

@Suite("Health reply")
struct HealthReplyCodecTests {
    @Test("the health reply is {\"status\":\"ok\"} and decodes to its status; other members are refused")
    func health() throws {
        #expect(String(decoding: HealthReplyCodec.encode(), as: UTF8.self) == #"{"status":"ok"}"#)
        #expect(try HealthReplyCodec.decode(HealthReplyCodec.encode(status: "draining")) == "draining")
        #expect(wireError { try HealthReplyCodec.decode(bytes(#"{"status":"ok","uptime":1}"#)) } == .unknownMember(path: "$.uptime"))
        #expect(wireError { try HealthReplyCodec.decode(bytes(#"{"status":1}"#)) } == .wrongType(path: "$.status", expected: "a string"))
    }
}

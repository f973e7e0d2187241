import SyncJournalProtocol
import SyncJournalWire
import Testing

@Suite("Protocol messages: the limits the decoders judge, and those they leave to the server")
struct ProtocolLimitsDecodingTests {
    static let id1 = "01010203-0405-4607-8809-0a0b0c0d0e01"
    static let id2 = "01010203-0405-4607-8809-0a0b0c0d0e02"

    static func mutation(id: String, kind: String = "pin", recordID: String = "p1") -> String {
        #"{"operationId":"\#(id)","kind":"\#(kind)","op":"create","recordId":"\#(recordID)","baseUpdatedAt":null,"fields":{}}"#
    }

    static func pull(kinds: Int) -> [UInt8] {
        let members = (0..<kinds).map { #""k\#($0)":null"# }.joined(separator: ",")
        return bytes(#"{"cursors":{\#(members)},"limit":10,"resync":false}"#)
    }

    @Test("a push naming one operation id twice is refused, naming the id and both places")
    func duplicateOperationID() {
        let body = bytes(#"{"mutations":[\#(Self.mutation(id: Self.id1)),\#(Self.mutation(id: Self.id2, recordID: "p2")),\#(Self.mutation(id: Self.id1, recordID: "p3"))]}"#)
        let error = wireError { try PushRequestCodec.decode(body) }
        #expect(error == .invalidValue(path: "$.mutations[2].operationId",
                                       reason: "operation id \(Self.id1) appears twice in one push (first at $.mutations[0])"))
        #expect(error?.errorCode == .badRequest)
        #expect(error?.httpStatus == 400)
    }

    @Test("a kind or record id longer than the protocol allows still decodes: the server rejects that mutation alone")
    func overLongMutationsDecode() throws {
        let kind = String(repeating: "k", count: 4_000)
        let id = String(repeating: "i", count: 65)
        let body = bytes(#"{"mutations":[\#(Self.mutation(id: Self.id1, kind: kind, recordID: id))]}"#)
        let mutations = try PushRequestCodec.decode(body)
        #expect(mutations.map(\.kind) == [kind])
        #expect(mutations.map(\.recordID) == [id])
    }

    @Test("a pull naming exactly the most kinds allowed decodes; one more is a 400 naming the limit")
    func kindsPerPull() throws {
        let limit = ProtocolLimits.maximumKindsPerPull
        #expect(try PullRequestCodec.decode(Self.pull(kinds: limit)).cursors.count == limit)
        let error = wireError { try PullRequestCodec.decode(Self.pull(kinds: limit + 1)) }
        #expect(error == .invalidValue(path: "$.cursors", reason: "\(limit + 1) kinds, at most \(limit) in one pull"))
        #expect(error?.httpStatus == 400)
    }

    @Test("a pull's kind of exactly the most bytes allowed decodes; one byte more, or U+0000, is a 400")
    func kindBytesInPull() throws {
        let limit = ProtocolLimits.maximumKindBytes
        func body(_ kind: String) -> [UInt8] {
            PullRequestCodec.encode(PullRequest(cursors: [kind: nil], limit: 10))
        }
        let longest = String(repeating: "é", count: limit / 2)
        #expect(try PullRequestCodec.decode(body(longest)).cursors.keys.sorted() == [longest])
        #expect(wireError { try PullRequestCodec.decode(body(longest + "k")) }
                == .invalidValue(path: "$.cursors", reason: "kind of \(limit + 1) bytes, at most \(limit)"))
        #expect(wireError { try PullRequestCodec.decode(body("p\u{0}n")) } == .invalidValue(path: "$.cursors", reason: "kind contains U+0000"))
    }
}

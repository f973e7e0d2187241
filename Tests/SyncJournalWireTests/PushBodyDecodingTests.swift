import Foundation
import SyncJournalProtocol
@testable import SyncJournalWire
import Testing

/// Pushes are read straight from their bytes, replies written straight to
/// bytes; both must agree with the JSON value path they replace.
@Suite("Push bodies read and replies written without a JSON tree")
struct PushBodyDecodingTests {
    static let id = "01010203-0405-4607-8809-0a0b0c0d0e01"

    /// A push of one create whose field `v` is `value` (JSON text).
    static func push(field value: String, id: String = PushBodyDecodingTests.id) -> [UInt8] {
        bytes(#"{"mutations":[{"operationId":"\#(id)","kind":"pin","op":"create","recordId":"p1","baseUpdatedAt":null,"fields":{"v":\#(value)}}]}"#)
    }

    /// The mutations of `body` read through a parsed ``JSONValue`` (the reference).
    static func throughJSONValue(_ body: [UInt8]) throws(WireError) -> [Mutation] {
        guard case .object(let members) = try JSONValue(parsing: body), case .array(let items)? = members["mutations"] else {
            throw .wrongType(path: "$.mutations", expected: "an array")
        }
        var mutations: [Mutation] = []
        for (index, item) in items.enumerated() { mutations.append(try MutationCodec.decode(item, at: "$.mutations[\(index)]")) }
        return mutations
    }

    @Test("mutations read straight from a push body equal those read through the parsed JSON")
    func sameMutations() throws {
        let body = PushRequestCodec.encode(sampleMutations)
        #expect(try PushRequestCodec.decode(body) == sampleMutations)
        #expect(try Self.throughJSONValue(body) == sampleMutations)
        let spaced = bytes(" {\n \"mutations\" : [ ] \n} ")
        #expect(try PushRequestCodec.decode(spaced) == [])
        let nested = Self.push(field: #" { "object" : { "a" : { "array" : [ 1 , { "set" : [ "x" , "y" ] } , [ ] ] }, "b" : { "array" : [ ] } } } "#)
        #expect(wireError { try PushRequestCodec.decode(nested) } == wireError { try Self.throughJSONValue(nested) })
        let valid = Self.push(field: #" { "object" : { "a" : { "array" : [ 1 , { "set" : [ "x" , "y" ] } , { "array" : [ ] } ] }, "b" : { "array" : [ ] } } } "#)
        #expect(try PushRequestCodec.decode(valid) == Self.throughJSONValue(valid))
    }

    @Test("a malformed field value in a push fails with the same error as through the parsed JSON")
    func sameErrors() {
        let values = [
            "[1]", "{}", #"{"bytes":"","set":[]}"#, #"{"list":[]}"#, #"{"list":[],"set":[]}"#, #"{"double":1.5}"#, #"{"double":"NaN"}"#,
            #"{"bytes":5}"#, #"{"bytes":"AAE"}"#, #"{"set":"a"}"#, #"{"set":["a",1]}"#, #"{"set":["a","b","a"]}"#,
            #"{"set":["\u00e9","e\u0301"]}"#, #"{"timestamp":1.5}"#, #"{"timestamp":"2025"}"#, #"{"uuid":"nope"}"#,
            #"{"uuid":"CE56971C-DE35-4897-821E-FC0B1046C8BF"}"#, #"{"array":{}}"#, #"{"array":[1,{"set":[1]}]}"#,
            #"{"array":[1,[2]]}"#, #"{"object":[]}"#, #"{"object":{"":1}}"#, #"{"object":{"a b":{"array":[{"list":1}]}}}"#,
            String(repeating: #"{"array":["#, count: 11) + "1" + String(repeating: "]}", count: 11),
        ]
        for value in values {
            let body = Self.push(field: value)
            let expected = wireError { try Self.throughJSONValue(body) }
            #expect(expected != nil, "\(value)")
            #expect(wireError { try PushRequestCodec.decode(body) } == expected, "\(value)")
        }
    }

    @Test("a push whose bytes are not JSON fails as through the parser, before what its mutations mean")
    func syntaxFirst() {
        let bodies = [
            #"{"mutations":[{"op":"sideways"}]} x"#,
            #"{"mutations":[{"op":"sideways","fields":{"v":01}}]}"#,
            #"{"mutations":[],"mutations":[]}"#,
            #"{"mutations":[{"fields":{"a":1,"a":2}}]}"#,
            #"{"mutations":[{"fields":{"v":"\ud800"}}]}"#,
            #"{"mutations":[{"fields":{"v":99999999999999999999}}]}"#,
            "{\"mutations\":[{\"fields\":{\"v\":\"\u{1}\"}}]}",
            #"{"mutations":[{"#,
            String(repeating: "[", count: 40),
        ]
        for body in bodies {
            let expected = wireError { try JSONParser().parse(bytes(body)) }
            #expect(expected != nil, "\(body)")
            #expect(wireError { try PushRequestCodec.decode(bytes(body)) } == expected, "\(body)")
        }
        #expect(wireError { try PushRequestCodec.decode(bytes("[]")) } == .wrongType(path: "$", expected: "an object"))
        #expect(wireError { try PushRequestCodec.decode(bytes("{}")) } == .missingMember(path: "$.mutations"))
        #expect(wireError { try PushRequestCodec.decode(bytes(#"{"mutations":{}}"#)) } == .wrongType(path: "$.mutations", expected: "an array"))
        #expect(wireError { try PushRequestCodec.decode(bytes(#"{"mutations":[],"zz":1,"aa":2}"#)) } == .unknownMember(path: "$.aa"))
        #expect(wireError { try PushRequestCodec.decode(bytes(#"{"mutations":[5]}"#)) } == .wrongType(path: "$.mutations[0]", expected: "an object"))
    }

    @Test("a large integer array in a push is counted first and built once, at its final size")
    func largeArrayBuiltAtFinalSize() throws {
        let count = 100_000
        let body = Self.push(field: #"{"array":["# + Array(repeating: "7", count: count).joined(separator: ",") + "]}")
        let mutations = try PushRequestCodec.decode(body)
        guard case .array(let elements)? = mutations.first?.fields["v"] else {
            Issue.record("no array read")
            return
        }
        #expect(elements.count == count)
        #expect(elements.allSatisfy { $0 == .int(7) })
        // Grown by doubling it would hold room for 131,072; reserved up front
        // it holds at most an allocation page more than it needs.
        #expect(elements.capacity <= count + 4_096 / MemoryLayout<FieldValue>.stride + 1)
    }

    @Test("an array is counted by its own brackets, whatever strings and nested values it holds")
    func countsElements() {
        let cases: [(String, Int)] = [
            ("[]", 0), ("[ ]", 0), ("[1]", 1), (" [ 1 , 2 ] ", 2), (#"["a,b","]",{"x":[1,2]},[3,[4,5]]]"#, 4),
            (#"["\"", "\\", "x"]"#, 3), (#"{"a":1,"b":{"c":2,"d":3}}"#, 2), ("{}", 0),
        ]
        for (text, expected) in cases {
            var scanner = JSONScanner(bytes: bytes(text), maximumDepth: 32)
            #expect((try? scanner.validateDocument()) != nil, "\(text)")
            scanner.skipWhitespace()
            #expect(scanner.countElements() == expected, "\(text)")
        }
    }

    @Test("an operation id in uppercase, or in any spelling but lowercase 8-4-4-4-12 hex, is refused naming the member")
    func operationIDSpelling() throws {
        let upper = "01010203-0405-4607-8809-0A0B0C0D0E01"
        #expect(wireError { try PushRequestCodec.decode(Self.push(field: "1", id: upper)) }
                == .invalidValue(path: "$.mutations[0].operationId",
                                 reason: "\"\(upper)\" is not an operation id in lowercase 8-4-4-4-12 hex (ids are compared byte for byte)"))
        #expect(wireError { try Self.throughJSONValue(Self.push(field: "1", id: upper)) } != nil)
        let reply = bytes(#"{"results":[{"operationId":"\#(upper)","status":"duplicate"}]}"#)
        #expect(wireError { try PushReplyCodec.decode(reply) } != nil, "a reply names the id as it was sent")
        #expect(try PushRequestCodec.decode(Self.push(field: "1")).first?.operationID.description == Self.id)
    }

    @Test("replies written straight to bytes are the bytes of their JSON values")
    func repliesAsJSONValues() {
        var results = sampleResults
        results.append(MutationResult(operationID: operationID(9), outcome: .applied(ServerRow(kind: "pin", id: "v", fields: ["n": .int(1)],
                                                                                                updatedAt: 7, modelVersion: 3))))
        for versions in [true, false] {
            let reference = JSONValue.object(["results": .array(results.map { MutationResultCodec.encode($0, includingModelVersions: versions) })])
            #expect(PushReplyCodec.encode(results, includingModelVersions: versions) == reference.encoded())
            var page = samplePage
            page.rows.append(ServerRow(kind: "pin", id: "m", fields: everyFieldValue, updatedAt: 9, modelVersion: 65_535))
            let pageReference = JSONValue.object([
                "rows": .array(page.rows.map { ServerRowCodec.encode($0, includingModelVersion: versions) }),
                "nextCursors": .object(page.nextCursors.mapValues { .string(PullCursorCodec.encode($0)) }),
                "hasMore": .bool(page.hasMore),
            ])
            #expect(PullPageCodec.encode(page, includingModelVersions: versions) == pageReference.encoded())
            for row in [sampleRow, sampleTombstone, page.rows.last] as [ServerRow?] + [nil] {
                let rowReference = JSONValue.object(["row": row.map { ServerRowCodec.encode($0, includingModelVersion: versions) } ?? .null])
                #expect(ReadReplyCodec.encode(row, includingModelVersions: versions) == rowReference.encoded())
            }
        }
        for value in [Int64.min, -1, 0, 9, 10, 1_000_000, .max] {
            var out: [UInt8] = []
            JSONValue.writeInteger(value, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == String(value))
        }
    }
}

import Foundation
import Testing
import SyncJournalFieldCodec
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalCore
import SyncJournalTesting
import SyncJournalWire

/// The server's push path keeps fields in the field codec's encoding from
/// the body to the database and back: these pin it to the path that builds
/// values (decode to ``FieldValue``, then encode), byte for byte and error
/// for error.
@Suite("pushes whose fields stay encoded")
struct EncodedPushTests {
    /// A push body of one create (or `op`) with `fields` as the JSON text of its field list.
    static func body(fields: String, op: String = "create", id: String = "r1",
                     operation: String = "00000000-0000-4000-8000-000000000001") -> [UInt8] {
        Array(("{\"mutations\":[{\"operationId\":\"\(operation)\",\"kind\":\"pin\",\"op\":\"\(op)\",\"recordId\":\"\(id)\","
            + "\"baseUpdatedAt\":null,\"fields\":\(fields)}]}").utf8)
    }

    /// Field lists as clients may write them: every type, escapes, extremes,
    /// member and set orders the encoding sorts, whitespace, nesting to the limit.
    static let fieldLists: [String] = [
        "{}",
        #"{"n":null,"t":true,"f":false,"zero":0,"neg":-1,"max":9223372036854775807,"min":-9223372036854775808}"#,
        #"{"d":1.5,"negzero":-0.0,"tiny":5e-324,"huge":1.7976931348623157e308,"exp":1E2,"frac":0.1,"int-like":2.0}"#,
        #"{"nan":{"double":"nan"},"inf":{"double":"inf"},"ninf":{"double":"-inf"}}"#,
        #"{"s":"plain","esc":"a\"b\\c\/d\b\f\n\r\t","uni":"\u00e9\u4e2d\ud83d\ude00","raw":"é中😀","ctl":"\u0001\u001f","empty":""}"#,
        #"{"b":{"bytes":""},"b2":{"bytes":"AAEC/w=="},"b3":{"bytes":"aGVsbG8gd29ybGQ="}}"#,
        #"{"set":{"set":["b","a","é","Z","e\u0301x",""]},"none":{"set":[]}}"#,
        #"{"at":{"timestamp":1764000000000000},"before":{"timestamp":-1},"id":{"uuid":"0f8fad5b-d9cb-469f-a165-70867728950e"}}"#,
        #"{"a":{"array":[1,"two",3.5,null,true,{"array":[]},{"object":{}},{"set":["x"]}]}}"#,
        #"{"photo":{"attachment":{"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","size":5242880,"type":"image/jpeg"}},"files":{"object":{"a.txt":{"attachment":{"type":"text/plain","size":0,"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}}}}}"#,
        #"{"o":{"object":{"z":1,"a":{"object":{"é":2,"e":3,"Z":4}},"m":{"array":[{"object":{"k":"v"}}]}}}}"#,
        #"{"z":1,"a":2,"é":3,"Z":4,"e\u0301x":5,"日本":6,"ab":7,"a b":8}"#,
        " { \"spaced\" : { \"array\" : [ 1 , 2 ,\n\t3 ] } , \"other\" : \"x\" } ",
        #"{"deep":{"array":[{"array":[{"array":[{"array":[{"array":[{"array":[{"array":[{"array":[{"array":[{"array":[1]}]}]}]}]}]}]}]}]}]}}"#,
        #"{"deepobj":{"object":{"a":{"object":{"a":{"object":{"a":{"object":{"a":{"object":{"a":{"array":[{"object":{"a":{"array":[{"array":[{"array":[7]}]}]}}}]}}}}}}}}}}}}"#,
    ]

    /// The field codec's bytes for `fields`, as the storage wrote them before.
    static func codecBytes(_ fields: [String: FieldValue]) -> [UInt8] {
        var writer = ByteWriter(capacity: 64)
        FieldListCodec.encode(fields, into: &writer)
        return writer.bytes
    }

    @Test("every field list transcodes to the bytes the field codec writes for its decoded values")
    func transcodingMatchesTheCodec() throws {
        for (index, list) in Self.fieldLists.enumerated() {
            let body = Self.body(fields: list)
            let decoded = try PushRequestCodec.decode(body)
            let encoded = try PushRequestCodec.decodeEncoded(body)
            #expect(encoded.count == 1)
            #expect(encoded[0].fields.bytes == Self.codecBytes(decoded[0].fields), "list \(index)")
            #expect(encoded[0].fields.decoded() == decoded[0].fields, "list \(index)")
            #expect(encoded[0].fields.names == decoded[0].fields.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
            var withoutFields = decoded[0]
            withoutFields.fields = [:]
            #expect(encoded[0].mutation == withoutFields)
            #expect(try EncodedFields(list: encoded[0].fields.bytes) == encoded[0].fields, "the stored list reads back as written")
        }
    }

    @Test("random values transcode to the field codec's bytes and read back as JSON the value path writes")
    func randomValuesMatch() throws {
        var random = SeededRandom(seed: 0x5EED)
        let operationID = try #require(OperationID("00000000-0000-4000-8000-000000000001"))
        for round in 0..<300 {
            var fields: [String: FieldValue] = [:]
            for _ in 0..<random.below(6) { fields[Self.name(&random)] = Self.value(&random, depth: 0) }
            let mutation = Mutation(operationID: operationID,
                                    kind: "pin", op: .create, recordID: "r\(round)", fields: fields, baseUpdatedAt: nil)
            let body = PushRequestCodec.encode([mutation])
            let encoded = try PushRequestCodec.decodeEncoded(body)
            #expect(encoded[0].fields.bytes == Self.codecBytes(fields), "round \(round)")
            #expect(encoded[0].fields.decoded() == fields, "round \(round)")
            let row = ServerRow(kind: "pin", id: "r\(round)", fields: fields, updatedAt: 7, modelVersion: 3)
            let old = PushReplyCodec.encode([MutationResult(operationID: mutation.operationID, outcome: .applied(row))])
            let new = PushReplyCodec.encode(encoded: [EncodedMutationResult(
                operationID: mutation.operationID,
                outcome: .applied(EncodedRow(kind: "pin", id: "r\(round)", fields: encoded[0].fields, updatedAt: 7, modelVersion: 3)))])
            #expect(old == new, "round \(round)")
        }
    }

    static let invalidFieldLists: [String] = [
        #"[1]"#, #""text""#,
        #"{"x":[1]}"#, #"{"x":{"array":[1],"set":[]}}"#, #"{"x":{}}"#,
        #"{"x":{"double":"1"}}"#, #"{"x":{"double":1}}"#, #"{"x":{"bytes":"@@"}}"#, #"{"x":{"bytes":1}}"#,
        #"{"x":{"set":["a","a"]}}"#, #"{"x":{"set":["é","e\u0301"]}}"#, #"{"x":{"set":[1]}}"#, #"{"x":{"set":"a"}}"#,
        #"{"x":{"timestamp":1.5}}"#, #"{"x":{"timestamp":"1"}}"#, #"{"x":{"uuid":"0F8FAD5B-D9CB-469F-A165-70867728950E"}}"#,
        #"{"x":{"uuid":1}}"#, #"{"x":{"wat":1}}"#, #"{"x":{"array":{"a":1}}}"#, #"{"x":{"object":[1]}}"#,
        #"{"":1}"#, #"{"x":{"object":{"":1}}}"#, #"{"x":{"array":[{"object":{"a":{"array":[[1]]}}}]}}"#,
        #"{"ok":1,"x":{"array":[1,2,{"bad":3}]},"y":[2]}"#,
        #"{"x":{"array":[{"array":[{"array":[{"array":[{"array":[{"array":[{"array":[{"array":[{"array":[{"array":[{"array":[]}]}]}]}]}]}]}]}]}]}]}}"#,
        #"{"x":{"object":{"b":{"set":[1]},"a":{"set":[2]}}}}"#,
        #"{"x":{"attachment":{"sha256":"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855","size":1,"type":"image/jpeg"}}}"#,
        #"{"x":{"attachment":{"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","size":-1,"type":"image/jpeg"}}}"#,
        #"{"x":{"attachment":{"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","size":1,"type":"jpeg"}}}"#,
        #"{"x":{"attachment":{"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","size":1,"type":"image/jpeg","name":"a"}}}"#,
        #"{"x":{"attachment":{"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","type":"image/jpeg"}}}"#,
        #"{"x":{"attachment":{"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85","size":1,"type":"image/jpeg"}}}"#,
        #"{"x":{"attachment":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}}"#,
    ]

    static let invalidBodies: [[UInt8]] = invalidFieldLists.map { body(fields: $0) } + [
        body(fields: #"{"x":1}"#, op: "delete"),
        Array(#"{"mutations":[{"operationId":"00000000-0000-4000-8000-000000000001","kind":"pin","op":"create","recordId":"r","baseUpdatedAt":null}]}"#.utf8),
        Array(#"{"mutations":[{"operationId":"00000000-0000-4000-8000-000000000001","kind":"pin","op":"create","recordId":"r","baseUpdatedAt":null,"fields":{"x":[1]},"queuedAt":"x"}]}"#.utf8),
        Array(#"{"mutations":[{"operationId":"00000000-0000-4000-8000-000000000001","kind":"pin","op":"delete","recordId":"r","baseUpdatedAt":1,"fields":{"x":1},"queuedAt":"x"}]}"#.utf8),
        Array(#"{"mutations":[{"operationId":"00000000-0000-4000-8000-000000000001","kind":"pin","op":"create","recordId":"r","baseUpdatedAt":null,"fields":{"x":9223372036854775808}}]}"#.utf8),
        Array(#"{"mutations":[{"operationId":"00000000-0000-4000-8000-000000000001","kind":"pin","op":"create","recordId":"r","baseUpdatedAt":null,"fields":{"x":"\ud800"}}]}"#.utf8),
        body(fields: #"{"x":1}"#) + Array("x".utf8),
    ]

    @Test("a body the value path refuses is refused with the same error when transcoded")
    func invalidBodiesFailAlike() throws {
        for (index, body) in Self.invalidBodies.enumerated() {
            var old: WireError?
            var new: WireError?
            do throws(WireError) { _ = try PushRequestCodec.decode(body) } catch { old = error }
            do throws(WireError) { _ = try PushRequestCodec.decodeEncoded(body) } catch { new = error }
            #expect(old != nil, "body \(index) is refused")
            #expect(old == new, "body \(index)")
        }
    }

    @Test("a push through the encoded path answers, stores and replies as the value path does, on SQLite")
    func storageAgrees() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-encoded"); defer { directory.remove() }
        let clock: @Sendable () -> Int64 = { 1_764_000_000_000 }
        let byValues = try SQLiteStorage(path: directory.file("values.sqlite"), clock: clock)
        let byBytes = try SQLiteStorage(path: directory.file("bytes.sqlite"), clock: clock)
        let tooMany = (0...ProtocolLimits.maximumFieldsPerRecord).map { "\"f\($0)\":\($0)" }.joined(separator: ",")
        let half = (0..<200).map { "\"g\($0)\":\($0)" }.joined(separator: ",")
        let otherHalf = (100..<300).map { "\"g\($0)\":\($0)" }.joined(separator: ",")
        let kindTooLong = String(repeating: "k", count: ProtocolLimits.maximumKindBytes + 1)
        var pushes: [(user: String, body: [UInt8])] = []
        func push(_ mutations: [String], user: String = "u1") {
            pushes.append((user, Array("{\"mutations\":[\(mutations.joined(separator: ","))]}".utf8)))
        }
        func mutation(_ n: Int, _ op: String, _ id: String, base: String = "null", fields: String = "{}", kind: String = "pin") -> String {
            "{\"operationId\":\"00000000-0000-4000-8000-\(String(format: "%012d", n))\",\"kind\":\"\(kind)\",\"op\":\"\(op)\","
                + "\"recordId\":\"\(id)\",\"baseUpdatedAt\":\(base),\"fields\":\(fields),\"modelVersion\":\(n % 3 + 1)}"
        }
        push([mutation(1, "create", "a", fields: Self.fieldLists[9]), mutation(2, "create", "b", fields: Self.fieldLists[4])])
        // A resend answers from what was remembered; a create of a live record is a conflict.
        push([mutation(1, "create", "a", fields: Self.fieldLists[9]), mutation(3, "create", "a", fields: #"{"x":1}"#)])
        // Updates: a merge over the stored fields, a stale base, a missing record.
        push([mutation(4, "update", "a", base: "1764000000001", fields: #"{"z":{"set":["q"]},"new":"n","o":null}"#),
              mutation(5, "update", "a", base: "1", fields: #"{"x":2}"#),
              mutation(6, "update", "missing", base: "1", fields: #"{"x":2}"#)])
        // Refusals: another user's record, too many fields, a kind too long, a merge past the field limit.
        push([mutation(7, "update", "a", base: "1764000000003", fields: #"{"x":2}"#)], user: "u2")
        push([mutation(8, "create", "c", fields: "{\(tooMany)}"), mutation(9, "create", "d", fields: "{}", kind: kindTooLong),
              mutation(10, "create", "e", fields: "{\(half)}"), mutation(11, "update", "e", base: "1764000000004", fields: "{\(otherHalf)}")])
        // Deletes: stale, applied, repeated.
        push([mutation(12, "delete", "b", base: "1"), mutation(13, "delete", "b", base: "1764000000002"),
              mutation(14, "delete", "b", base: "1764000000002"), mutation(15, "create", "b", fields: #"{"again":true}"#)])
        for (index, pushed) in pushes.enumerated() {
            let old = try byValues.push(user: pushed.user, try PushRequestCodec.decode(pushed.body), expecting: nil)
            let new = try byBytes.pushEncoded(user: pushed.user, try PushRequestCodec.decodeEncoded(pushed.body), expecting: nil)
            #expect(new.map(\.decoded) == old, "push \(index)")
            for modelVersions in [true, false] {
                #expect(PushReplyCodec.encode(encoded: new, includingModelVersions: modelVersions)
                    == PushReplyCodec.encode(old, includingModelVersions: modelVersions), "push \(index)")
            }
        }
        let request = PullRequest(cursors: ["pin": nil], limit: 100)
        #expect(try byBytes.pull(user: "u1", request).rows == byValues.pull(user: "u1", request).rows)
    }

    @Test("a stored list that is not one the server writes is refused, never trusted")
    func corruptListsAreRefused() {
        let valid = Self.codecBytes(["a": .array([.int(1), .string("é")]), "b": .object(["k": .stringSet(["x", "y"])])])
        for length in 0..<valid.count {
            #expect(throws: EncodedFieldsFailure.self, "cut at \(length)") { try EncodedFields(list: Array(valid[..<length])) }
        }
        let bad: [[UInt8]] = [
            valid + [0],
            [1, 1, UInt8(ascii: "a"), 12],                              // an unknown type
            [2, 1, UInt8(ascii: "b"), 0, 1, UInt8(ascii: "a"), 0],      // names out of order
            [1, 0, 0],                                                  // an empty name
            [1, 1, UInt8(ascii: "a"), 5, 1, 0xFF],                      // a string that is not UTF-8
            [1, 1, UInt8(ascii: "a"), 7, 2, 1, UInt8(ascii: "b"), 1, UInt8(ascii: "a")],   // a set out of order
            [1, 1, UInt8(ascii: "a"), 3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
            [1, 1, UInt8(ascii: "a")] + Array(repeating: 10, count: 11) + Array(repeating: 0, count: 11),
        ]
        for (index, bytes) in bad.enumerated() {
            #expect(throws: EncodedFieldsFailure.self, "list \(index)") { try EncodedFields(list: bytes) }
        }
    }

    // MARK: Random values

    static func name(_ random: inout SeededRandom) -> String {
        ["a", "b", "Z", "é", "e\u{301}", "title", "日本", "a b", "x\"y", "long name"][random.below(10)]
    }

    static func value(_ random: inout SeededRandom, depth: Int) -> FieldValue {
        switch random.below(depth < FieldValue.maximumNestingDepth ? 13 : 11) {
        case 0: return .null
        case 1: return .bool(random.below(2) == 0)
        case 2: return .int([0, 1, -1, 63, 64, -65, Int64.max, Int64.min, 1 << 40][random.below(9)])
        case 3: return .double([0.1, -0.0, 1.5, 1e300, .leastNonzeroMagnitude, .nan, .infinity, -.infinity, 2.0, 123456.789][random.below(10)])
        case 4: return .string(["", "plain", "tab\there", "quote\"", "é中😀", "\u{1}\u{1f}", "back\\slash"][random.below(7)])
        case 5: return .bytes(Array((0..<random.below(8)).map { UInt8(truncatingIfNeeded: $0 * 37) }))
        case 6: return .stringSet(Set((0..<random.below(4)).map { ["b", "a", "é", "Z", ""][$0] }))
        case 7: return .timestamp([0, -1, 1_764_000_000_000_000, Int64.min][random.below(4)])
        case 8:
            if random.below(2) == 0 { return .uuid(UUID(uuidString: "0F8FAD5B-D9CB-469F-A165-70867728950E")!) }
            return .attachment(Attachment(content: ContentHash(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 41) })!,
                                          size: [0, 1, 1 << 40][random.below(3)], mediaType: ["image/png", "text/plain"][random.below(2)]))
        case 9, 11: return .array((0..<random.below(4)).map { _ in value(&random, depth: depth + 1) })
        default:
            var members: [String: FieldValue] = [:]
            for _ in 0..<random.below(4) { members[name(&random)] = value(&random, depth: depth + 1) }
            return .object(members)
        }
    }
}

/// A small deterministic generator (SplitMix64), so a failing round can be run again.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

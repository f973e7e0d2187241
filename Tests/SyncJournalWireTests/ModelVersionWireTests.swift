import SyncJournalProtocol
import SyncJournalWire
import Testing

@Suite("A mutation's and a row's optional modelVersion on the wire")
struct ModelVersionWireTests {
    static let id = OperationID("6f1c2a4e-2b7d-4c1e-9a53-0d8e7f6a5b41")!

    static func push(_ extra: String) -> [UInt8] {
        Array("""
            {"mutations": [{"operationId": "6f1c2a4e-2b7d-4c1e-9a53-0d8e7f6a5b41", "kind": "pin", "op": "create",
             "recordId": "p1", "baseUpdatedAt": null, "fields": {}\(extra)}]}
            """.utf8)
    }

    static func read(_ extra: String) -> [UInt8] {
        Array(#"{"row": {"kind": "pin", "id": "p1", "fields": {}, "updatedAt": 5, "deletedAt": null\#(extra)}}"#.utf8)
    }

    static func refusal(_ decode: () throws(WireError) -> Void) -> WireError? {
        do throws(WireError) {
            try decode()
            return nil
        } catch {
            return error
        }
    }

    @Test("a mutation's modelVersion round-trips, and one without it is sent exactly as before (no member)")
    func mutationRoundTrip() throws {
        let versioned = Mutation(operationID: Self.id, kind: "pin", op: .create, recordID: "p1", fields: [:], baseUpdatedAt: nil,
                                 modelVersion: 3)
        let body = PushRequestCodec.encode([versioned])
        #expect(String(decoding: body, as: UTF8.self).contains(#""modelVersion":3"#))
        #expect(try PushRequestCodec.decode(body) == [versioned])
        var plain = versioned
        plain.modelVersion = nil
        let plainBody = PushRequestCodec.encode([plain])
        #expect(!String(decoding: plainBody, as: UTF8.self).contains("modelVersion"))
        #expect(try PushRequestCodec.decode(plainBody) == [plain])
        #expect(PushRequestCodec.encode([versioned], includingModelVersion: false) == plainBody, "left out for a server older than the member")
        #expect(try PushRequestCodec.decode(Self.push("")).first?.modelVersion == nil, "an older client's push has none")
    }

    @Test("a mutation's modelVersion that is 0, negative, above 65535, null, a string or a fraction is refused at its path")
    func mutationRefusals() throws {
        for value in ["0", "-1", "65536", "null", "\"3\"", "2.0", "9223372036854775808"] {
            let error = Self.refusal { () throws(WireError) in _ = try PushRequestCodec.decode(Self.push(", \"modelVersion\": \(value)")) }
            #expect(error != nil, "\(value) was taken")
        }
        let error = Self.refusal { () throws(WireError) in _ = try PushRequestCodec.decode(Self.push(", \"modelVersion\": 0")) }
        #expect(error == .invalidValue(path: "$.mutations[0].modelVersion", reason: "0 is not a model version (1 to 65535)"))
        #expect(try PushRequestCodec.decode(Self.push(", \"modelVersion\": 65535")).first?.modelVersion == 65_535)
    }

    @Test("a row's modelVersion round-trips in pull, read and push replies, and is left out for a client that does not read it")
    func rowRoundTrip() throws {
        let row = ServerRow(kind: "pin", id: "p1", fields: ["a": .int(1)], updatedAt: 5, modelVersion: 4)
        let page = PullPage(rows: [row], nextCursors: ["pin": PullCursor(updatedAt: 5, id: "p1")], hasMore: false)
        #expect(try PullPageCodec.decode(PullPageCodec.encode(page)) == page)
        #expect(try ReadReplyCodec.decode(ReadReplyCodec.encode(row)) == row)
        let results = [MutationResult(operationID: Self.id, outcome: .applied(row))]
        #expect(try PushReplyCodec.decode(PushReplyCodec.encode(results)) == results)
        var unversioned = row
        unversioned.modelVersion = nil
        #expect(try PullPageCodec.decode(PullPageCodec.encode(page, includingModelVersions: false)).rows == [unversioned])
        #expect(ReadReplyCodec.encode(row, includingModelVersions: false) == ReadReplyCodec.encode(unversioned))
        #expect(!String(decoding: ReadReplyCodec.encode(unversioned), as: UTF8.self).contains("modelVersion"))
        #expect(try ReadReplyCodec.decode(Self.read("")) == unversioned.withFields([:]))
    }

    @Test("a row's modelVersion out of range is a malformed reply naming its path")
    func rowRefusals() throws {
        let error = Self.refusal { () throws(WireError) in _ = try ReadReplyCodec.decode(Self.read(", \"modelVersion\": 70000")) }
        #expect(error == .invalidValue(path: "$.row.modelVersion", reason: "70000 is not a model version (1 to 65535)"))
    }
}

private extension ServerRow {
    func withFields(_ fields: [String: FieldValue]) -> ServerRow {
        var row = self
        row.fields = fields
        return row
    }
}

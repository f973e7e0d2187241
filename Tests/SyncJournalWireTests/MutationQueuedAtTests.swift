import SyncJournalProtocol
import SyncJournalWire
import Testing

@Suite("A mutation's optional queuedAt on the wire")
struct MutationQueuedAtTests {
    static let id = OperationID("6f1c2a4e-2b7d-4c1e-9a53-0d8e7f6a5b41")!

    static func body(_ extra: String) -> [UInt8] {
        Array("""
            {"mutations": [{"operationId": "6f1c2a4e-2b7d-4c1e-9a53-0d8e7f6a5b41", "kind": "pin", "op": "create",
             "recordId": "p1", "baseUpdatedAt": null, "fields": {}\(extra)}]}
            """.utf8)
    }

    @Test("a queuedAt round-trips, and a mutation without one is sent without the member, as older clients send it")
    func roundTrip() throws {
        let dated = Mutation(operationID: Self.id, kind: "pin", op: .create, recordID: "p1", fields: [:], baseUpdatedAt: nil,
                             queuedAt: 1_764_000_000_123)
        #expect(try PushRequestCodec.decode(PushRequestCodec.encode([dated])) == [dated])
        var undated = dated
        undated.queuedAt = nil
        let plain = PushRequestCodec.encode([undated])
        #expect(!String(decoding: plain, as: UTF8.self).contains("queuedAt"))
        #expect(try PushRequestCodec.decode(plain) == [undated])
        #expect(PushRequestCodec.encode([dated], includingQueuedAt: false) == plain, "left out for a server older than the member")
    }

    @Test("a push from an older client (no queuedAt) decodes with none; a negative one is kept as sent")
    func olderClient() throws {
        #expect(try PushRequestCodec.decode(Self.body("")).first?.queuedAt == nil)
        #expect(try PushRequestCodec.decode(Self.body(", \"queuedAt\": -5")).first?.queuedAt == -5)
    }

    @Test("a queuedAt that is null, a string, a fraction or outside Int64 is refused at its path")
    func refusals() {
        for value in ["null", "\"1764000000000\"", "1.5", "9223372036854775808"] {
            do {
                _ = try PushRequestCodec.decode(Self.body(", \"queuedAt\": \(value)"))
                Issue.record("\(value) was taken")
            } catch {
                #expect(error.path?.hasPrefix("$.mutations[0]") ?? true, "\(value): \(error)")
            }
        }
    }
}

import Foundation
import Testing
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalTesting
import SyncJournalWire

/// The protocol's limits as `sync-server` enforces them: a mutation over a
/// per-mutation limit is rejected by itself while the rest of its push is
/// applied; a request over a per-request limit is a 4xx; neither is a 5xx,
/// and every backend answers the same.
@Suite("protocol limits: a client's mistake is a rejection or a 4xx, never a 5xx")
struct ProtocolLimitsTests {
    static let aliceUsers: UserDirectory = {
        var users = UserDirectory()
        try? users.add(token: "t-alice", user: "alice")
        return users
    }()

    static func isPermanentRejection(_ outcome: MutationOutcome, _ reason: String) -> Bool {
        outcome == .rejected(reason: reason, permanent: true)
    }

    static func nested(_ depth: Int) -> FieldValue { (0..<depth).reduce(FieldValue.string("bottom")) { inner, _ in .array([inner]) } }

    static func errorBody(_ response: HTTPResponse) throws -> ErrorBody { try ErrorBodyCodec.decode(response.body) }

    // The kind does not compress, so without the limit PostgreSQL's index could not hold it.
    @Test("a create with a 4,000-character kind is rejected permanently while the creates beside it are applied, in order, with 200",
          arguments: StorageBackend.tested)
    func longKindBesideValidCreates(backend: StorageBackend) throws {
        let server = try RoutedStorage(backend)
        let mutations = [Mutations.create("p1"), Mutations.create("p1", kind: NoiseText.of(count: 4_000)), Mutations.create("p2")]
        let response = server.push(mutations)
        #expect(response.status == 200)
        let results = try PushReplyCodec.decode(response.body, answering: mutations)
        #expect(results[0].outcome.appliedRow?.id == "p1")
        #expect(Self.isPermanentRejection(results[1].outcome, "kind of 4000 bytes, at most 128"))
        #expect(results[2].outcome.appliedRow?.id == "p2")
        #expect(try server.rows().map(\.id) == ["p1", "p2"])
        // The resend a client would make is judged the same way, and the applied ones answer their first results.
        #expect(try server.results(mutations).map(\.outcome) == results.map(\.outcome))
    }

    @Test("over a real socket, the push with a 4,000-character kind is answered 200: that mutation rejected, the create beside it applied")
    func longKindOverHTTP() throws {
        let fixture = try SyncServerFixture(maximumBatchSize: 3, maximumBodyBytes: 65_536)
        let mutations = [Mutations.create("p1", kind: NoiseText.of(count: 4_000)), Mutations.create("p2")]
        let results = try fixture.push(mutations)
        #expect(Self.isPermanentRejection(results[0].outcome, "kind of 4000 bytes, at most 128"))
        #expect(results[1].outcome.appliedRow?.id == "p2")
        #expect(try fixture.pullAll().map(\.id) == ["p2"])
    }

    @Test("a pull naming 450,000 kinds is a 400 naming the limit, and nothing reaches storage")
    func hugePullNeverReachesStorage() throws {
        let storage = RecordingStorage()
        let router = SyncRouter(storage: storage, users: Self.aliceUsers)
        var body = Array(#"{"cursors":{"#.utf8)
        for index in 0..<450_000 {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body += Array(#""k\#(index)":null"#.utf8)
        }
        body += Array(#"},"limit":500,"resync":false}"#.utf8)
        let response = router.respond(to: HTTPRequest(method: "POST", target: "/v1/sync/pull",
                                                      headers: [HTTPHeader(name: "Authorization", value: "Bearer t-alice")], body: body))
        #expect(response.status == 400)
        let error = try Self.errorBody(response)
        #expect(error.code == .badRequest)
        #expect(error.message == "$.cursors: 450000 kinds, at most \(ProtocolLimits.maximumKindsPerPull) in one pull")
        #expect(storage.callCount == 0)
    }

    @Test("a push naming one operation id twice is a 400 naming it, and nothing of it is applied", arguments: StorageBackend.tested)
    func duplicateOperationID(backend: StorageBackend) throws {
        let server = try RoutedStorage(backend)
        let twice = OperationID.random()
        let response = server.push([Mutations.create("a", operation: twice), Mutations.create("b"), Mutations.create("c", operation: twice)])
        #expect(response.status == 400)
        let error = try Self.errorBody(response)
        #expect(error.code == .badRequest)
        #expect(error.message.contains("operation id \(twice) appears twice in one push"))
        #expect(try server.rows().isEmpty)
    }

    @Test("each per-mutation limit: a mutation exactly at it is applied, one past it is rejected permanently naming it",
          arguments: StorageBackend.tested)
    func perMutationLimits(backend: StorageBackend) throws {
        let server = try RoutedStorage(backend)
        let kindLimit = ProtocolLimits.maximumKindBytes
        let idLimit = ProtocolLimits.maximumRecordIDBytes
        let fieldLimit = ProtocolLimits.maximumFieldsPerRecord
        let nameLimit = ProtocolLimits.maximumFieldNameBytes
        func fields(_ count: Int) -> [String: FieldValue] {
            Dictionary(uniqueKeysWithValues: (0..<count).map { ("f\($0)", FieldValue.int(Int64($0))) })
        }
        // Multi-byte characters: the limits count UTF-8 bytes, not characters.
        let cases: [(Mutation, String?)] = [
            (Mutations.create("k", kind: String(repeating: "é", count: kindLimit / 2)), nil),
            (Mutations.create("k", kind: String(repeating: "é", count: kindLimit / 2) + "k"), "kind of \(kindLimit + 1) bytes, at most \(kindLimit)"),
            (Mutations.create(String(repeating: "é", count: idLimit / 2)), nil),
            (Mutations.create(String(repeating: "é", count: idLimit / 2) + "i"), "record id must be 1 to \(idLimit) bytes of UTF-8, not \(idLimit + 1)"),
            (Mutations.create("fields", fields(fieldLimit)), nil),
            (Mutations.create("fields-over", fields(fieldLimit + 1)), "\(fieldLimit + 1) fields, at most \(fieldLimit) in a record"),
            (Mutations.create("name", [String(repeating: "n", count: nameLimit): .null]), nil),
            (Mutations.create("name-over", [String(repeating: "n", count: nameLimit + 1): .null]),
             "field name \"nnnnnnnnnnnnnnnn…\" of \(nameLimit + 1) bytes, at most \(nameLimit)"),
            (Mutations.create("deep", ["v": Self.nested(FieldValue.maximumNestingDepth)]), nil),
            (Mutations.create("nul\u{0}", kind: "pin"), "record id contains U+0000"),
            (Mutations.create("p", kind: "p\u{0}n"), "kind contains U+0000"),
        ]
        let results = try server.results(cases.map(\.0))
        for (index, (mutation, reason)) in cases.enumerated() {
            if let reason {
                #expect(Self.isPermanentRejection(results[index].outcome, reason), "\(mutation.kind.prefix(8))/\(mutation.recordID.prefix(8))")
            } else {
                #expect(results[index].outcome.appliedRow != nil, "\(mutation.kind.prefix(8))/\(mutation.recordID.prefix(8)): \(results[index].outcome)")
            }
        }
        // An update may change a full record's fields but not add one past the limit.
        let full = try #require(results[4].outcome.appliedRow)
        let growing = Mutations.update("fields", base: full.updatedAt, ["extra": .null])
        let changing = Mutations.update("fields", base: full.updatedAt, ["f0": .string("changed")])
        let updates = try server.results([growing, changing])
        #expect(Self.isPermanentRejection(updates[0].outcome,
                                          "the update would leave \(fieldLimit + 1) fields in pin/fields, at most \(fieldLimit) in a record"))
        #expect(updates[1].outcome.appliedRow?.fields.count == fieldLimit)
    }

    @Test("each per-request limit: a request exactly at it is answered 200, one past it is a 4xx naming it", arguments: StorageBackend.tested)
    func perRequestLimits(backend: StorageBackend) throws {
        let server = try RoutedStorage(backend)
        let kinds = ProtocolLimits.maximumKindsPerPull
        #expect(server.pull(kinds: (0..<kinds).map { "k\($0)" }).status == 200)
        let tooManyKinds = server.pull(kinds: (0...kinds).map { "k\($0)" })
        #expect(tooManyKinds.status == 400)
        #expect(try Self.errorBody(tooManyKinds).message == "$.cursors: \(kinds + 1) kinds, at most \(kinds) in one pull")
        let longKind = server.pull(kinds: [String(repeating: "k", count: ProtocolLimits.maximumKindBytes + 1)])
        #expect(longKind.status == 400)

        // A value nested past the limit cannot be read as a field value at all: the push is malformed.
        let deep = server.push([Mutations.create("deep-over", ["v": Self.nested(FieldValue.maximumNestingDepth + 1)])])
        #expect(deep.status == 400)

        let pushLimit = ProtocolLimits.maximumMutationsPerPush
        let atLimit = server.push((0..<pushLimit).map { Mutations.create("r\($0)", [:]) })
        #expect(atLimit.status == 200)
        let overLimit = server.push((0...pushLimit).map { Mutations.create("s\($0)", [:]) })
        #expect(overLimit.status == 413)
        #expect(try Self.errorBody(overLimit).message == "\(pushLimit + 1) mutations, at most \(pushLimit) per push")
    }

    @Test("a delete of a record that never existed is applied as a tombstone in the deleting user's personal space; another user's create of the id makes that user's own record",
          arguments: StorageBackend.tested)
    func deleteOfNothing(backend: StorageBackend) throws {
        let server = try RoutedStorage(backend)
        let deleted = try server.results([Mutations.delete("ghost", base: 12_345)])
        let tombstone = try #require(deleted.first?.outcome.appliedRow)
        #expect(tombstone.isTombstone)
        #expect(try server.rows().map(\.id) == ["ghost"], "the deleting user's other devices pull the tombstone")
        #expect(try server.rows(token: "t-bob").isEmpty)
        let taken = try server.results([Mutations.create("ghost")], token: "t-bob")
        #expect(taken[0].outcome.appliedRow?.isTombstone == false, "ids are unique per personal space")
        let again = try server.results([Mutations.delete("ghost", base: nil)])
        #expect(again.first?.outcome.appliedRow == tombstone, "deleting it again answers the same tombstone")
        #expect(try server.results([Mutations.create("ghost")]).first?.outcome.appliedRow?.isTombstone == false)
    }
}

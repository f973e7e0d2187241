import Testing
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalTesting
import SyncJournalWire

/// Every server keeps, per row, the highest model version that has written
/// the record (`StorageRules`), and returns it on pushes and pulls.
@Suite("model versions kept per row by every server")
struct ModelVersionStorageTests {
    /// Turns the fixture's database back into the schema before model
    /// versions (no `model_version` columns), for migration tests.
    static func dropModelVersions(_ fixture: StorageUnderTest) throws {
        try fixture.query("alter table rows drop column model_version")
        try fixture.query("alter table operations drop column model_version")
    }

    static func versioned(_ mutation: Mutation, _ version: Int?) -> Mutation {
        var mutation = mutation
        mutation.modelVersion = version
        return mutation
    }

    /// Pushes creates, updates and a delete stating versions 2, 5, 3, none
    /// and 4 through `push`, and returns the rows each answered, in order.
    static func versionedHistory(_ push: ([Mutation]) throws -> [MutationResult]) throws -> [ServerRow] {
        var rows: [ServerRow] = []
        func apply(_ mutation: Mutation) throws {
            let row = try #require(try push([mutation]).first?.outcome.appliedRow, "\(mutation.op) applied")
            rows.append(row)
        }
        try apply(versioned(Mutations.create("p1"), 2))
        try apply(versioned(Mutations.update("p1", base: rows[0].updatedAt, ["title": .string("five")]), 5))
        try apply(versioned(Mutations.update("p1", base: rows[1].updatedAt, ["title": .string("three")]), 3))
        try apply(Mutations.update("p1", base: rows[2].updatedAt, ["title": .string("untyped")]))
        try apply(versioned(Mutations.delete("p1", base: rows[3].updatedAt), 4))
        return rows
    }

    @Test("SQLite and PostgreSQL keep the highest model version that wrote a row, on its tombstone too, and a pull returns it",
          arguments: StorageBackend.tested)
    func storagesKeepTheHighest(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend)
        let rows = try Self.versionedHistory { try fixture.storage.push(user: "u1", $0) }
        #expect(rows.map(\.modelVersion) == [2, 5, 5, 5, 5])
        #expect(rows.last?.isTombstone == true)
        let pulled = try fixture.storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10))
        #expect(pulled.rows.map(\.modelVersion) == [5])
        #expect(try fixture.query("select model_version from rows where id = 'p1'") == 5)
        // A record nobody versioned has none.
        let plain = try #require(try fixture.storage.push(user: "u1", [Mutations.create("p2")]).first?.outcome.appliedRow)
        #expect(plain.modelVersion == nil)
        #expect(try fixture.query("select count(*) from rows where id = 'p2' and model_version is null") == 1)
    }

    @Test("a resent push is answered with the remembered row, its model version included", arguments: StorageBackend.tested)
    func rememberedRowsKeepTheirVersion(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend)
        let create = Self.versioned(Mutations.create("p1"), 7)
        _ = try fixture.storage.push(user: "u1", [create])
        let again = try #require(try fixture.storage.push(user: "u1", [create]).first?.outcome.appliedRow)
        #expect(again.modelVersion == 7)
    }

    @Test("the in-memory reference server keeps the highest model version that wrote a row, on its tombstone too, and a pull returns it")
    func referenceServerKeepsTheHighest() async throws {
        let server = ReferenceServer()
        var rows: [ServerRow] = []
        func apply(_ mutation: Mutation) async throws {
            rows.append(try #require(try await server.push(user: "u1", [mutation]).first?.outcome.appliedRow, "\(mutation.op) applied"))
        }
        try await apply(Self.versioned(Mutations.create("p1"), 2))
        try await apply(Self.versioned(Mutations.update("p1", base: rows[0].updatedAt, ["title": .string("five")]), 5))
        try await apply(Self.versioned(Mutations.update("p1", base: rows[1].updatedAt, ["title": .string("three")]), 3))
        try await apply(Mutations.update("p1", base: rows[2].updatedAt, ["title": .string("untyped")]))
        try await apply(Self.versioned(Mutations.delete("p1", base: rows[3].updatedAt), 4))
        #expect(rows.map(\.modelVersion) == [2, 5, 5, 5, 5])
        let pulled = try await server.pull(user: "u1", cursors: ["pin": nil], limit: 10)
        #expect(pulled.rows.map(\.modelVersion) == [5])
        let refused = try await server.push(user: "u1", [Self.versioned(Mutations.create("p0"), 0)])
        #expect(refused.map(\.outcome) == [.rejected(reason: "model version 0, not 1 to 65535", permanent: true)])
    }

    @Test("a mutation stating a model version outside 1 to 65535 is rejected permanently, naming the limit, and nothing is written",
          arguments: StorageBackend.tested)
    func outOfRangeVersionsAreRejected(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend)
        for version in [0, -1, ProtocolLimits.maximumModelVersion + 1] {
            let result = try #require(try fixture.storage.push(user: "u1", [Self.versioned(Mutations.create("p\(version)"), version)]).first)
            #expect(result.outcome == .rejected(reason: "model version \(version), not 1 to 65535", permanent: true))
        }
        #expect(try fixture.query("select count(*) from rows") == 0)
        let edge = try #require(try fixture.storage.push(user: "u1", [Self.versioned(Mutations.create("edge"), 65_535)]).first)
        #expect(edge.outcome.appliedRow?.modelVersion == 65_535)
    }

    @Test("a database from before rows kept model versions opens with none on its rows; writes after keep theirs",
          arguments: StorageBackend.tested)
    func upgradeAddsModelVersions(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend)
        let old = try #require(try fixture.storage.push(user: "u1", [Mutations.create("p1")]).first?.outcome.appliedRow)
        fixture.storage.closeConnections()
        try Self.dropModelVersions(fixture)
        switch backend {
        case .sqlite: try fixture.query("pragma user_version = 3")
        case .postgres: try fixture.query("update storage_schema set version = 4 where \"only\" = 1")
        }
        let upgraded = try fixture.reopen()
        defer { upgraded.closeConnections() }
        switch backend {
        case .sqlite: #expect(try fixture.query("pragma user_version") == StorageSchema.version)
        case .postgres: #expect(try fixture.query("select version from storage_schema") == PostgreSQLSchema.version)
        }
        #expect(try fixture.query("select count(*) from rows where model_version is null") == 1)
        #expect(try fixture.query("select count(*) from operations where model_version is null") == 1)
        let updated = try #require(try upgraded.push(user: "u1", [Self.versioned(Mutations.update("p1", base: old.updatedAt, ["title": .string("u")]), 3)])
            .first?.outcome.appliedRow)
        #expect(updated.modelVersion == 3)
        #expect(try upgraded.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10)).rows.map(\.modelVersion) == [3])
    }

    @Test("a database of the next schema version is refused, not opened", arguments: StorageBackend.tested)
    func newerSchemaIsRefused(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend)
        fixture.storage.closeConnections()
        switch backend {
        case .sqlite: try fixture.query("pragma user_version = \(StorageSchema.version + 1)")
        case .postgres: try fixture.query("update storage_schema set version = \(PostgreSQLSchema.version + 1) where \"only\" = 1")
        }
        #expect(throws: StorageError.self) { try fixture.reopen() }
    }

    /// One request of alice's to a SQLite server's router, with `headers` besides the token.
    static func respond(_ router: SyncRouter, _ path: String, _ body: String, headers: [HTTPHeader] = []) -> HTTPResponse {
        router.respond(to: HTTPRequest(method: "POST", target: path,
                                       headers: [HTTPHeader(name: "Authorization", value: "Bearer t-alice")] + headers,
                                       body: Array(body.utf8)))
    }

    @Test("the server sends rows' modelVersion only to a client that names it in Sync-Row-Members, so an older client still reads every reply")
    func rowsCarryVersionsOnlyWhenAsked() throws {
        let fixture = try StorageUnderTest(.sqlite)
        var users = UserDirectory()
        try users.add(token: "t-alice", user: "alice")
        let router = SyncRouter(storage: fixture.storage, users: users)
        let asks = [HTTPHeader(name: "sync-row-members", value: "other, modelVersion")]
        let push = #"{"mutations":[{"operationId":"00000000-0000-4000-8000-000000000001","kind":"pin","op":"create","recordId":"p1","baseUpdatedAt":null,"fields":{},"modelVersion":3}]}"#
        let pushed = Self.respond(router, "/v1/sync/push", push)
        #expect(pushed.status == 200)
        #expect(!String(decoding: pushed.body, as: UTF8.self).contains("modelVersion"), "the answer to an older client has none")
        let pull = #"{"cursors":{"pin":null},"limit":10,"resync":false}"#
        let old = Self.respond(router, "/v1/sync/pull", pull)
        #expect(try PullPageCodec.decode(old.body).rows.map(\.modelVersion) == [nil])
        let new = Self.respond(router, "/v1/sync/pull", pull, headers: asks)
        #expect(try PullPageCodec.decode(new.body).rows.map(\.modelVersion) == [3])
        let read = Self.respond(router, "/v1/sync/read", #"{"kind":"pin","id":"p1"}"#, headers: asks)
        #expect(try ReadReplyCodec.decode(read.body)?.modelVersion == 3)
        let resent = Self.respond(router, "/v1/sync/push", push, headers: asks)
        #expect(try PushReplyCodec.decode(resent.body).first?.outcome.appliedRow?.modelVersion == 3)
    }

    @Test("a push whose mutation states modelVersion 0 is a 400 bad_request naming the member, and nothing of it is applied")
    func badVersionOnTheWireIsRefused() throws {
        let fixture = try StorageUnderTest(.sqlite)
        var users = UserDirectory()
        try users.add(token: "t-alice", user: "alice")
        let router = SyncRouter(storage: fixture.storage, users: users)
        let push = #"{"mutations":[{"operationId":"00000000-0000-4000-8000-000000000001","kind":"pin","op":"create","recordId":"p1","baseUpdatedAt":null,"fields":{},"modelVersion":0}]}"#
        let response = Self.respond(router, "/v1/sync/push", push)
        #expect(response.status == 400)
        let body = try ErrorBodyCodec.decode(response.body)
        #expect(body.code == .badRequest)
        #expect(body.message.contains("$.mutations[0].modelVersion"))
        #expect(try fixture.query("select count(*) from rows") == 0)
    }
}

import Testing
import SyncJournalProtocol
@testable import SyncJournalServer
import SyncJournalPlatform
import SyncJournalTesting

/// How spaces reach change observers and waits, and how a database from
/// before spaces upgrades.
@Suite("shared spaces: changes, waits and the schema upgrade")
struct SpaceChangeTests {
    static let trip = SpaceID("2f9d1c3a-4b5e-4f60-8a71-9c2d3e4f5a6b")!

    @Test("a storage tells its observer of a push into a space and of each membership change, with the users whose membership changed",
          arguments: StorageBackend.tested.filter { $0 == .sqlite })
    func observerHearsSpaces(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let heard = Mutex<[StorageChange]>([])
        subject.storage.observeChanges { change in heard.withLock { $0.append(change) } }
        defer { subject.storage.stopObservingChanges() }
        try subject.storage.change(user: "dad", .create(Self.trip, name: "Trip"))
        try subject.storage.change(user: "dad", .setMember(Self.trip, user: "kid", role: .editor))
        _ = try subject.storage.push(user: "kid", [Mutations.create("p1", space: Self.trip), Mutations.create("own")])
        try subject.storage.change(user: "dad", .removeMember(Self.trip, user: "kid"))
        #expect(heard.withLock { $0 } == [.membershipChanged(Self.trip, users: ["dad"]), .membershipChanged(Self.trip, users: ["kid"]),
                                         .committed(user: "kid", kinds: ["pin"]), .committedInSpace(Self.trip, kinds: ["pin"]),
                                         .membershipChanged(Self.trip, users: ["kid"])])
        #expect(throws: StorageError.spaceRefused(.noSuchSpace(Self.trip))) { try subject.storage.change(user: "kid", .leave(Self.trip)) }
        #expect(heard.withLock { $0.count } == 5, "a refused change is not announced")
    }

    @Test("a wait ends with a push into a space it follows of a kind it names, a membership change of such a space, or one of its own user's")
    func waitsFollowSpaces() {
        let other = SpaceID("9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d")!
        func ends(_ change: StorageChange) -> Bool {
            ChangeWaitRegistry.concerns(change, user: "kid", kinds: ["pin"], spaces: [Self.trip])
        }
        #expect(ends(.committedInSpace(Self.trip, kinds: ["pin"])) && ends(.committedInSpace(Self.trip, kinds: [])))
        #expect(!ends(.committedInSpace(Self.trip, kinds: ["note"])) && !ends(.committedInSpace(other, kinds: ["pin"])))
        #expect(ends(.membershipChanged(Self.trip, users: [])) && ends(.membershipChanged(other, users: ["kid"])))
        #expect(!ends(.membershipChanged(other, users: ["gran"])))
        #expect(ends(.committed(user: "kid", kinds: ["pin"])) && !ends(.committed(user: "dad", kinds: ["pin"])) && ends(.unknown))
    }

    @Test("a look before a wait over spaces finds rows, descriptions and lost spaces, and nothing once the device is current",
          arguments: StorageBackend.tested)
    func lookBeforeWaiting(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let storage = subject.storage
        #expect(try !storage.hasChanges(user: "kid", after: ["pin": nil], spaces: [:]))
        try storage.change(user: "dad", .create(Self.trip, name: "Trip"))
        try storage.change(user: "dad", .setMember(Self.trip, user: "kid", role: .viewer))
        #expect(try storage.hasChanges(user: "kid", after: ["pin": nil], spaces: [:]), "a space joined")
        #expect(try storage.followedSpaces(user: "kid", named: [:]) == [Self.trip])
        let page = try storage.pull(user: "kid", PullRequest(cursors: ["pin": nil], limit: 10, spaces: [:]))
        var held = [Self.trip: SpaceCursors(version: page.spaces.first?.version, cursors: [:])]
        #expect(try !storage.hasChanges(user: "kid", after: ["pin": nil], spaces: held))
        subject.clock.set(subject.clock.now + 1)
        let row = try #require(try storage.push(user: "dad", [Mutations.create("p1", space: Self.trip)]).first?.outcome.appliedRow)
        #expect(try storage.hasChanges(user: "kid", after: ["pin": nil], spaces: held), "a row in the space")
        held[Self.trip]?.cursors["pin"] = PullCursor(updatedAt: row.updatedAt, id: row.id)
        #expect(try !storage.hasChanges(user: "kid", after: ["pin": nil], spaces: held))
        try storage.change(user: "dad", .removeMember(Self.trip, user: "kid"))
        #expect(try storage.hasChanges(user: "kid", after: ["pin": nil], spaces: held), "a space lost")
    }

    @Test("PostgreSQL change notices carry pushes into spaces and membership changes; one too long for a notice means anything changed")
    func noticesRoundTrip() {
        let changes: [StorageChange] = [.committed(user: "u1", kinds: ["pin"]), .committedInSpace(Self.trip, kinds: ["pin", "note"]),
                                        .committedInSpace(Self.trip, kinds: []), .membershipChanged(Self.trip, users: ["kid"]),
                                        .membershipChanged(Self.trip, users: [])]
        for change in changes {
            guard case let (subject, names)? = PostgreSQLChangeSubject.of(change) else {
                Issue.record("\(change) is not announced")
                continue
            }
            let payload = PostgreSQLChangeNotice.payload(subject, names: names) + "\npublic"
            #expect(PostgreSQLChangeNotice.change(from: payload, schema: "public") == change)
            #expect(PostgreSQLChangeNotice.change(from: payload, schema: "other") == nil)
        }
        let crowd = Set((0..<1_000).map { "member-with-a-long-name-\($0)" })
        let long = PostgreSQLChangeNotice.payload(.membership(Self.trip), names: crowd) + "\npublic"
        #expect(PostgreSQLChangeNotice.change(from: long, schema: "public") == .unknown)
    }

    @Test("a wait on the reference server that follows spaces ends with a push into one of them, and with the user joining a space")
    func referenceWaitsFollowSpaces() async throws {
        let server = ReferenceServer()
        try await server.change(user: "dad", .create(Self.trip, name: "Trip"))
        try await server.change(user: "dad", .setMember(Self.trip, user: "kid", role: .viewer))
        let page = try await server.transport(user: "kid").pull(PullRequest(cursors: ["pin": nil], limit: 10, spaces: [:]))
        let held = [Self.trip: SpaceCursors(version: page.spaces.first?.version, cursors: [:])]
        let kid = server.transport(user: "kid")
        let waiting = Task { try await kid.waitForChanges(after: ["pin": nil], spaces: held, timeout: .seconds(60)) }
        while await server.openChangeWaits == 0 { await Task.yield() }
        _ = try await server.push(user: "dad", [Mutations.create("p1", space: Self.trip)])
        #expect(try await waiting.value == .changed)

        let other = SpaceID("9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d")!
        let current = try await kid.pull(PullRequest(cursors: ["pin": nil], limit: 10, spaces: held))
        let now = [Self.trip: SpaceCursors(version: held[Self.trip]?.version, cursors: ["pin": current.nextSpaceCursors[Self.trip]?["pin"]])]
        let second = Task { try await kid.waitForChanges(after: ["pin": nil], spaces: now, timeout: .seconds(60)) }
        while await server.openChangeWaits == 0 { await Task.yield() }
        try await server.change(user: "mom", .create(other, name: "Other"))
        #expect(await server.openChangeWaits == 1, "another space's change does not concern kid")
        try await server.change(user: "mom", .setMember(other, user: "kid", role: .viewer))
        #expect(try await second.value == .changed)
    }

    @Test("a SQLite database of schema version 5 upgrades in place: its rows stay in their owners' personal spaces, its horizons stay")
    func sqliteUpgradeFromVersion5() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-server"); defer { directory.remove() }
        let path = directory.file("sync.sqlite")
        let database = try SQLiteDatabase(path: path)
        try database.execute("""
            create table rows (kind text not null, id text not null, owner text not null, fields blob not null, updated_at integer not null,
              deleted_at integer, created_by text, model_version integer, primary key (kind, id)) without rowid;
            create index rows_pull on rows (kind, owner, updated_at, id);
            create table operations (owner text not null, operation_id text not null, kind text not null, id text not null,
              fields blob not null, updated_at integer not null, deleted_at integer, remembered_at integer not null default 0,
              model_version integer, primary key (owner, operation_id)) without rowid;
            create index operations_remembered on operations (remembered_at);
            create table stamp (only integer primary key check (only = 1), last integer not null);
            insert into stamp (only, last) values (1, 1764000000020);
            create table horizons (kind text primary key, updated_at integer not null, id text not null) without rowid;
            insert into horizons (kind, updated_at, id) values ('pin', 1764000000005, 'gone');
            create table server_identity (only integer primary key check (only = 1), identity text not null);
            insert into server_identity (only, identity) values (1, 'before-spaces');
            insert into rows (kind, id, owner, fields, updated_at) values ('pin', 'p1', 'u1', x'00', 1764000000010);
            insert into rows (kind, id, owner, fields, updated_at, deleted_at) values ('pin', 'p2', 'u1', x'00', 1764000000011, 1764000000011);
            insert into operations (owner, operation_id, kind, id, fields, updated_at) values
              ('u1', '0f6d2c1e-5b7a-4c2e-9a55-2b8e4d7f0c13', 'pin', 'p1', x'00', 1764000000010);
            pragma user_version = 5;
            """)
        database.close()
        let storage = try SQLiteStorage(path: path, clock: { 1_764_000_000_100 })
        defer { storage.closeConnections() }
        #expect(storage.identity == ServerIdentity("before-spaces"))
        let page = try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10))
        #expect(page.rows.map(\.id) == ["p1", "p2"] && page.rows.allSatisfy { $0.space == .personal && $0.fields.isEmpty })
        #expect(try storage.read(user: "u1", kind: "pin", id: "p1")?.updatedAt == 1_764_000_000_010)
        let resent = Mutation(operationID: OperationID("0f6d2c1e-5b7a-4c2e-9a55-2b8e4d7f0c13")!, kind: "pin", op: .create, recordID: "p1",
                              fields: [:], baseUpdatedAt: nil)
        #expect(try storage.push(user: "u1", [resent]).first?.outcome.appliedRow?.updatedAt == 1_764_000_000_010, "remembered operations stay")
        #expect(throws: StorageError.cursorExpired(kinds: ["pin"])) {
            try storage.pull(user: "u1", PullRequest(cursors: ["pin": PullCursor(updatedAt: 1_764_000_000_001, id: "a")], limit: 10))
        }
        #expect(try storage.push(user: "u2", [Mutations.create("p1")]).first?.outcome.appliedRow?.updatedAt == 1_764_000_000_100)
        try storage.change(user: "u1", .create(Self.trip, name: "Trip"))
        let reopened = try SQLiteDatabase(path: path)
        defer { reopened.close() }
        #expect(try reopened.withStatement("pragma user_version") { statement throws(SQLiteError) in try statement.step() ? statement.int64(0) : 0 }
                == StorageSchema.version)
    }
}

import Foundation
import Testing
import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalTesting

/// SQLite and PostgreSQL keep an identity made with the schema, refuse a
/// push or pull that expects another server or one further along inside the
/// transaction that would apply or read it, and never let the latest stamp
/// go down (journals/PROTOCOL.md, "Server identity").
@Suite("server identity kept and checked by every storage")
struct ServerIdentityStorageTests {
    static let other = ServerIdentity("another-server")!

    /// The storage error a call throws, or `nil` when it succeeds.
    static func failure<T>(_ body: () throws(StorageError) -> T) -> StorageError? {
        do throws(StorageError) {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    static func rowCount(_ fixture: StorageUnderTest) throws -> Int64 { try fixture.query("select count(*) from rows") ?? -1 }

    @Test("a new database has an identity that survives a restart, pages carry it, and two databases differ",
          arguments: StorageBackend.tested)
    func identitySurvivesRestart(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend)
        let second = try StorageUnderTest(backend)
        let identity = try #require(fixture.storage.identity)
        #expect(second.storage.identity != identity)
        #expect(try fixture.storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10)).server == identity)
        _ = try fixture.storage.push(user: "u1", [Mutations.create("p1")])
        fixture.storage.closeConnections()
        let reopened = try fixture.reopen()
        defer { reopened.closeConnections() }
        #expect(reopened.identity == identity)
    }

    @Test("a push expecting another server is refused whole, nothing applied, nothing remembered; the same push expecting this one applies",
          arguments: StorageBackend.tested)
    func differentServerRefusesPush(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend)
        let identity = try #require(fixture.storage.identity)
        let batch = [Mutations.create("p1"), Mutations.create("p2"), Mutations.create("p3")]
        let refused = Self.failure { () throws(StorageError) in
            try fixture.storage.push(user: "u1", batch, expecting: ServerExpectation(identity: Self.other, seenStamp: nil))
        }
        #expect(refused == .serverMismatch(.differentServer(expected: Self.other, found: identity)))
        #expect(try Self.rowCount(fixture) == 0)
        #expect(try fixture.rememberedCount() == 0)
        let results = try fixture.storage.push(user: "u1", batch, expecting: ServerExpectation(identity: identity, seenStamp: nil))
        #expect(results.allSatisfy { $0.outcome.appliedRow != nil })
        #expect(try Self.rowCount(fixture) == 3)
    }

    @Test("a device that pulled further than the user's latest stamp is refused as behind on push and pull; at the latest stamp it is served",
          arguments: StorageBackend.tested)
    func behindRefused(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend)
        let identity = try #require(fixture.storage.identity)
        _ = try fixture.storage.push(user: "u1", [Mutations.create("p1")])
        let page = try fixture.storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10))
        let seen = try #require(page.nextCursors["pin"]).updatedAt
        let ahead = ServerExpectation(identity: identity, seenStamp: seen + 1)
        let expected = StorageError.serverMismatch(.behind(identity: identity, seenStamp: seen + 1, latestStamp: seen))
        #expect(Self.failure { () throws(StorageError) in try fixture.storage.push(user: "u1", [Mutations.create("p2")], expecting: ahead) } == expected)
        #expect(Self.failure { () throws(StorageError) in
            try fixture.storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10, expectation: ahead))
        } == expected)
        #expect(try Self.rowCount(fixture) == 1)
        let atLatest = ServerExpectation(identity: identity, seenStamp: seen)
        _ = try fixture.storage.push(user: "u1", [Mutations.create("p2")], expecting: atLatest)
        #expect(try fixture.storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10, expectation: atLatest)).rows.count == 2)
    }

    @Test("purging tombstones never lowers the latest stamp: a device that pulled a tombstone is still served after it is purged",
          arguments: StorageBackend.tested)
    func purgeKeepsLatestStamp(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend)
        let identity = try #require(fixture.storage.identity)
        let created = try #require(try fixture.storage.push(user: "u1", [Mutations.create("p1")]).first?.outcome.appliedRow)
        fixture.clock.set(fixture.clock.now + 10)
        _ = try fixture.storage.push(user: "u1", [Mutations.delete("p1", base: created.updatedAt)])
        let page = try fixture.storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10))
        let seen = try #require(page.nextCursors["pin"]).updatedAt
        #expect(page.rows.last?.isTombstone == true)
        #expect(try fixture.storage.purgeTombstones(olderThan: seen + 1, kind: nil) == 1)
        #expect(try Self.rowCount(fixture) == 0)
        let expectation = ServerExpectation(identity: identity, seenStamp: seen)
        let again = try fixture.storage.pull(user: "u1", PullRequest(cursors: ["pin": .some(PullCursor(updatedAt: seen, id: "p1"))], limit: 10,
                                                                     expectation: expectation))
        #expect(again.rows.isEmpty)
        _ = try fixture.storage.push(user: "u1", [Mutations.create("p2")], expecting: expectation)
    }

    @Test("a push that expects a stamp another push of the same user is taking is decided atomically: refused with nothing applied, or applied above it",
          arguments: StorageBackend.tested)
    func racingPushes(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend)
        let identity = try #require(fixture.storage.identity)
        let storage = fixture.storage
        _ = try storage.push(user: "u1", [Mutations.create("seed")])
        var refusedRounds = 0
        var appliedRounds = 0
        for round in 0..<40 {
            // The clock stands still, so the racing push takes exactly the next stamp.
            let next = try #require(try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 1_000)).rows.map(\.updatedAt).max()) + 1
            let outcome = Mutex<Result<[MutationResult], StorageError>?>(nil)
            let expecting = [Mutations.create("a\(round)-1"), Mutations.create("a\(round)-2")]
            ConcurrentThreads.run([
                { _ = try? storage.push(user: "u1", [Mutations.create("b\(round)")]) },
                {
                    let result: Result<[MutationResult], StorageError>
                    do throws(StorageError) {
                        result = .success(try storage.push(user: "u1", expecting, expecting: ServerExpectation(identity: identity, seenStamp: next)))
                    } catch {
                        result = .failure(error)
                    }
                    outcome.withLock { $0 = result }
                },
            ])
            let rows = try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 1_000)).rows
            let mine = rows.filter { $0.id.hasPrefix("a\(round)-") }
            switch try #require(outcome.withLock { $0 }) {
            case .success(let results):
                appliedRounds += 1
                #expect(results.count == 2 && mine.count == 2)
                #expect(mine.allSatisfy { $0.updatedAt > next }, "applied only after the racing push took its stamp")
            case .failure(let error):
                refusedRounds += 1
                #expect(error == .serverMismatch(.behind(identity: identity, seenStamp: next, latestStamp: next - 1)))
                #expect(mine.isEmpty, "nothing of a refused push is applied")
            }
            #expect(rows.contains { $0.id == "b\(round)" })
        }
        #expect(appliedRounds + refusedRounds == 40)
    }

    @Test("a database from before identities opens with a new identity, keeps its rows and stamps, and is at the current version",
          arguments: StorageBackend.tested)
    func upgradeGivesAnIdentity(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend)
        let row = try #require(try fixture.storage.push(user: "u1", [Mutations.create("p1")]).first?.outcome.appliedRow)
        let before = try #require(fixture.storage.identity)
        fixture.storage.closeConnections()
        try fixture.query("drop table server_identity")
        switch backend {
        case .sqlite: try fixture.query("pragma user_version = 4")
        case .postgres: try fixture.query("update storage_schema set version = 5 where \"only\" = 1")
        }
        let upgraded = try fixture.reopen()
        defer { upgraded.closeConnections() }
        switch backend {
        case .sqlite: #expect(try fixture.query("pragma user_version") == StorageSchema.version)
        case .postgres: #expect(try fixture.query("select version from storage_schema") == PostgreSQLSchema.version)
        }
        let identity = try #require(upgraded.identity)
        #expect(identity != before)
        #expect(try fixture.query("select count(*) from server_identity") == 1)
        let page = try upgraded.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10,
                                                             expectation: ServerExpectation(identity: identity, seenStamp: row.updatedAt)))
        #expect(page.rows == [row])
        #expect(page.server == identity)
    }

    @Test("a stored identity that is not one refuses to open as corrupt", arguments: StorageBackend.tested)
    func corruptIdentityRefused(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend)
        fixture.storage.closeConnections()
        try fixture.query("update server_identity set identity = 'not an identity!'")
        #expect {
            try fixture.reopen()
        } throws: { error in
            guard case StorageError.corrupt(let table, _, _)? = error as? StorageError else { return false }
            return table == "server_identity"
        }
    }

    @Test("replacing the identity keeps every row, survives a restart, and devices that expect the old one are refused",
          arguments: StorageBackend.tested)
    func replacedIdentity(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend)
        let old = try #require(fixture.storage.identity)
        _ = try fixture.storage.push(user: "u1", [Mutations.create("p1")])
        let fresh: ServerIdentity
        switch fixture.storage {
        case let sqlite as SQLiteStorage: fresh = try sqlite.replaceIdentity()
        case let postgres as PostgreSQLStorage: fresh = try postgres.replaceIdentity()
        default: Issue.record("an unknown storage"); return
        }
        #expect(fresh != old)
        #expect(fixture.storage.identity == fresh)
        #expect(Self.failure { () throws(StorageError) in
            try fixture.storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10, expectation: ServerExpectation(identity: old, seenStamp: nil)))
        } == .serverMismatch(.differentServer(expected: old, found: fresh)))
        fixture.storage.closeConnections()
        let reopened = try fixture.reopen()
        defer { reopened.closeConnections() }
        #expect(reopened.identity == fresh)
        #expect(try reopened.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10)).rows.map(\.id) == ["p1"])
    }

    @Test("sync-server --new-identity parses to its own invocation and gives the SQLite database a new identity, its rows kept")
    func newIdentityCommand() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-identity")
        defer { directory.remove() }
        let path = directory.file("sync.sqlite")
        let storage = try SQLiteStorage(path: path)
        let old = try #require(storage.identity)
        _ = try storage.push(user: "u1", [Mutations.create("p1")])
        storage.closeConnections()
        guard case .newIdentity(let options) = try SyncServerCommandLine.parse(["--new-identity", "--db", path]) else {
            Issue.record("not a new-identity invocation")
            return
        }
        let line = try SyncServer.replaceIdentity(options: options)
        let reopened = try SQLiteStorage(path: path)
        defer { reopened.closeConnections() }
        let fresh = try #require(reopened.identity)
        #expect(fresh != old)
        #expect(line.contains("identity \(old) is now \(fresh)"))
        #expect(try reopened.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10)).rows.map(\.id) == ["p1"])
        guard case .run = try SyncServerCommandLine.parse(["--db", path]) else {
            Issue.record("a plain invocation no longer serves")
            return
        }
    }

    @Test("sync-server --new-identity on PostgreSQL gives the database a new identity", .enabled(if: PostgreSQLTestDatabase.shouldRun))
    func newIdentityCommandOnPostgreSQL() throws {
        let schema = try PostgreSQLTestSchema()
        let storage = try PostgreSQLStorage(connection: schema.connection)
        let old = try #require(storage.identity)
        _ = try storage.push(user: "u1", [Mutations.create("p1")])
        storage.closeConnections()
        guard case .newIdentity(let options) = try SyncServerCommandLine.parse(["--new-identity", "--postgres", schema.connection]) else {
            Issue.record("not a new-identity invocation")
            return
        }
        let line = try SyncServer.replaceIdentity(options: options)
        let reopened = try PostgreSQLStorage(connection: schema.connection)
        defer { reopened.closeConnections() }
        let fresh = try #require(reopened.identity)
        #expect(fresh != old)
        #expect(line.contains("identity \(old) is now \(fresh)"))
        #expect(try reopened.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10)).rows.map(\.id) == ["p1"])
    }
}

/// A backup restored into the database on either backend: the device that
/// pulled after the backup was taken is refused as behind until the
/// operator gives the database a new identity, then as another server.
@Suite("server identity after a restored backup, on every storage")
struct RestoredBackupStorageTests {
    @Test("a restored backup refuses a device that pulled after it as behind; a new identity refuses it as another server",
          arguments: StorageBackend.tested)
    func restoredBackup(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend)
        let identity = try #require(fixture.storage.identity)
        _ = try fixture.storage.push(user: "u1", [Mutations.create("p1")])
        fixture.storage.closeConnections()
        try fixture.backUp("before")
        fixture.clock.set(fixture.clock.now + 1_000)
        _ = try fixture.storage.push(user: "u1", [Mutations.create("p2"), Mutations.create("p3")])
        let page = try fixture.storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10))
        let seen = try #require(page.nextCursors["pin"]).updatedAt
        fixture.storage.closeConnections()

        try fixture.restore("before")
        let restored = try fixture.reopen()
        defer { restored.closeConnections() }
        #expect(restored.identity == identity)
        let expectation = ServerExpectation(identity: identity, seenStamp: seen)
        let behind = ServerIdentityStorageTests.failure { () throws(StorageError) in
            try restored.push(user: "u1", [Mutations.create("p4")], expecting: expectation)
        }
        guard case .serverMismatch(.behind(let found, let seenStamp, let latest))? = behind else {
            Issue.record("not refused as behind: \(String(describing: behind))")
            return
        }
        #expect(found == identity && seenStamp == seen && latest < seen)
        #expect(try restored.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10)).rows.map(\.id) == ["p1"])

        // The documented limitation: a later write stamps from the clock, past
        // the device's stamp, and the restore is no longer seen...
        fixture.clock.set(fixture.clock.now + 10_000)
        _ = try restored.push(user: "u1", [Mutations.create("p9")])
        _ = try restored.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10, expectation: expectation))
        // ...so the operator gives the restored database a new identity.
        let fresh: ServerIdentity
        switch restored {
        case let sqlite as SQLiteStorage: fresh = try sqlite.replaceIdentity()
        case let postgres as PostgreSQLStorage: fresh = try postgres.replaceIdentity()
        default: Issue.record("an unknown storage"); return
        }
        #expect(ServerIdentityStorageTests.failure { () throws(StorageError) in
            try restored.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10, expectation: expectation))
        } == .serverMismatch(.differentServer(expected: identity, found: fresh)))
    }
}

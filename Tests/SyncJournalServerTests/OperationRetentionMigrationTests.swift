import Testing
import SyncJournalProtocol
import SyncJournalServer

/// Opening a database of the schema before remembered operations were dated
/// (SQLite version 1, PostgreSQL version 2), or before rows kept the
/// operation that created them (SQLite version 2, PostgreSQL version 3).
@Suite("remembered operations dated by a schema migration")
struct OperationRetentionMigrationTests {
    static let retention = OperationRetention(retentionMilliseconds: 10_000)

    /// Turns the fixture's fresh database back into the previous schema:
    /// no `remembered_at`, no index on it, the previous version number.
    static func downgrade(_ fixture: StorageUnderTest) throws {
        try fixture.query("drop index operations_remembered")
        try fixture.query("alter table operations drop column remembered_at")
        try fixture.query("alter table rows drop column created_by")
        try ModelVersionStorageTests.dropModelVersions(fixture)
        switch fixture.backend {
        case .sqlite: try fixture.query("pragma user_version = 1")
        case .postgres: try fixture.query("update storage_schema set version = 2 where \"only\" = 1")
        }
    }

    @Test("a database from before rows kept their creating operation opens with none on its rows; rows written after get theirs",
          arguments: StorageBackend.tested)
    func upgradeAddsCreatingOperations(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend, operationRetention: Self.retention)
        let old = Mutations.create("p1")
        _ = try fixture.storage.push(user: "u1", [old])
        fixture.storage.closeConnections()
        try fixture.query("alter table rows drop column created_by")
        try ModelVersionStorageTests.dropModelVersions(fixture)
        switch backend {
        case .sqlite: try fixture.query("pragma user_version = 2")
        case .postgres: try fixture.query("update storage_schema set version = 3 where \"only\" = 1")
        }
        let upgraded = try fixture.reopen()
        defer { upgraded.closeConnections() }
        switch backend {
        case .sqlite: #expect(try fixture.query("pragma user_version") == StorageSchema.version)
        case .postgres: #expect(try fixture.query("select version from storage_schema") == PostgreSQLSchema.version)
        }
        #expect(try fixture.query("select count(*) from rows where created_by is null") == 1)
        let new = Mutations.create("p2")
        _ = try upgraded.push(user: "u1", [new])
        #expect(try fixture.query("select count(*) from rows where id = 'p2' and created_by = '\(new.operationID)'") == 1)
        #expect(try upgraded.push(user: "u1", [old]).first?.outcome.appliedRow != nil, "the old create is still remembered")
    }

    @Test("operations remembered before the upgrade are kept and answered, and count as remembered at the upgrade",
          arguments: StorageBackend.tested)
    func upgradeDatesOldOperations(_ backend: StorageBackend) throws {
        let fixture = try StorageUnderTest(backend, operationRetention: Self.retention)
        let start = fixture.clock.now
        let create = Mutations.create("p1")
        let first = try fixture.storage.push(user: "u1", [create])
        fixture.storage.closeConnections()
        try Self.downgrade(fixture)

        fixture.clock.set(start + 50_000)
        let upgraded = try fixture.reopen()
        defer { upgraded.closeConnections() }
        switch backend {
        case .sqlite: #expect(try fixture.query("pragma user_version") == StorageSchema.version)
        case .postgres: #expect(try fixture.query("select version from storage_schema") == PostgreSQLSchema.version)
        }
        #expect(try fixture.query("select remembered_at from operations") == start + 50_000)
        #expect(try upgraded.push(user: "u1", [create]) == first, "still remembered after the upgrade")
        fixture.clock.set(start + 60_000)
        #expect(try upgraded.pruneRememberedOperations(limit: 10) == 0, "a full retention from the upgrade")
        fixture.clock.set(start + 60_001)
        #expect(try upgraded.pruneRememberedOperations(limit: 10) == 1)
        let again = try fixture.reopen()
        again.closeConnections()
        #expect(try fixture.rememberedCount() == 0, "reopening an upgraded database changes nothing")
    }
}

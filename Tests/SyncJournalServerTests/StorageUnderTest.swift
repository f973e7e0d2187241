import SyncJournalProtocol
import SyncJournalServer
import SyncJournalTestSupport
import SyncJournalTesting

/// A fresh, empty storage of one backend with a hand-set clock: a SQLite
/// file in a temporary directory, or a PostgreSQL schema of its own.
final class StorageUnderTest {
    let backend: StorageBackend
    let clock = FixedClock()
    let storage: any SyncStorage
    let operationRetention: OperationRetention?
    private let directory: TemporaryDirectory?
    private let schema: PostgreSQLTestSchema?

    init(_ backend: StorageBackend, operationRetention: OperationRetention? = nil,
         knownUsers: @escaping @Sendable (String) -> Bool = UserDirectory.isPossibleUser) throws {
        self.backend = backend
        self.operationRetention = operationRetention
        switch backend {
        case .sqlite:
            let directory = try TemporaryDirectory(prefix: "syncjournal-server")
            self.directory = directory
            schema = nil
            storage = try SQLiteStorage(path: directory.file("sync.sqlite"), operationRetention: operationRetention, knownUsers: knownUsers,
                                        clock: clock.reading)
        case .postgres:
            let schema = try PostgreSQLTestSchema()
            self.schema = schema
            directory = nil
            storage = try PostgreSQLStorage(connection: schema.connection, operationRetention: operationRetention, knownUsers: knownUsers,
                                            clock: clock.reading)
        }
    }

    /// A second storage on the same database (a reopened file, a new pool).
    func reopen() throws -> any SyncStorage {
        if let directory { return try SQLiteStorage(path: directory.file("sync.sqlite"), operationRetention: operationRetention, clock: clock.reading) }
        guard let schema else { throw StorageError.badRequest("no database") }
        return try PostgreSQLStorage(connection: schema.connection, operationRetention: operationRetention, clock: clock.reading)
    }

    /// Runs `sql` on a connection of its own, outside the storage (to look
    /// at or age its tables), and returns the first column of the first row
    /// as an integer, if any.
    @discardableResult
    func query(_ sql: String) throws -> Int64? {
        if let directory {
            let database = try SQLiteDatabase(path: directory.file("sync.sqlite"))
            defer { database.close() }
            return try database.withStatement(sql) { statement throws(SQLiteError) in try statement.step() ? statement.int64(0) : nil }
        }
        guard let schema else { throw StorageError.badRequest("no database") }
        let connection = try PostgreSQLConnection(connection: schema.connection, applicationName: "syncjournal-tests")
        defer { connection.close() }
        let rows = try connection.execute(sql)
        return rows.count > 0 ? try rows.int64(0, 0) : nil
    }

    /// The tables a backup copies: everything the storage keeps.
    var tables: [String] {
        let shared = ["rows", "operations", "stamp", "horizons", "server_identity", "spaces", "space_members"]
        return backend == .postgres ? shared + ["user_stamps", "user_horizons", "space_horizons"] : shared
    }

    /// Copies every table into `NAME_backup_TAG`, as a backup taken now
    /// (close the storage's connections first when it must be consistent).
    func backUp(_ tag: String) throws {
        for table in tables {
            try query("drop table if exists \(table)_backup_\(tag)")
            try query("create table \(table)_backup_\(tag) as select * from \(table)")
        }
    }

    /// Puts every table back as ``backUp(_:)`` copied it (a restored
    /// backup, its identity included); reopen the storage after it.
    func restore(_ tag: String) throws {
        for table in tables {
            try query("delete from \(table)")
            try query("insert into \(table) select * from \(table)_backup_\(tag)")
        }
    }

    /// How many operations the storage remembers.
    func rememberedCount() throws -> Int64 { try query("select count(*) from operations") ?? -1 }

    deinit {
        storage.closeConnections()
        directory?.remove()
    }
}

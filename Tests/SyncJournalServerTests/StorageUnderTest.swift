import SyncJournalServer
import SyncJournalTesting

/// A fresh, empty storage of one backend with a hand-set clock: a SQLite
/// file in a temporary directory, or a PostgreSQL schema of its own.
final class StorageUnderTest {
    let backend: StorageBackend
    let clock = FixedClock()
    let storage: any SyncStorage
    private let directory: TemporaryDirectory?
    private let schema: PostgreSQLTestSchema?

    init(_ backend: StorageBackend) throws {
        self.backend = backend
        switch backend {
        case .sqlite:
            let directory = try TemporaryDirectory(prefix: "syncjournal-server")
            self.directory = directory
            schema = nil
            storage = try SQLiteStorage(path: directory.file("sync.sqlite"), clock: clock.reading)
        case .postgres:
            let schema = try PostgreSQLTestSchema()
            self.schema = schema
            directory = nil
            storage = try PostgreSQLStorage(connection: schema.connection, clock: clock.reading)
        }
    }

    /// A second storage on the same database (a reopened file, a new pool).
    func reopen() throws -> any SyncStorage {
        if let directory { return try SQLiteStorage(path: directory.file("sync.sqlite"), clock: clock.reading) }
        guard let schema else { throw StorageError.badRequest("no database") }
        return try PostgreSQLStorage(connection: schema.connection, clock: clock.reading)
    }

    deinit {
        storage.closeConnections()
        directory?.remove()
    }
}

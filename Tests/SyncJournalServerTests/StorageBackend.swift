import Testing

/// The storages the shared semantics suite runs against.
enum StorageBackend: String, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    /// SQLite always; PostgreSQL when a server is there or CI requires one
    /// (``PostgreSQLTestDatabase``; its absence is reported by the
    /// "PostgreSQL storage" suite's skips, never silently).
    static var tested: [StorageBackend] { PostgreSQLTestDatabase.shouldRun ? [.sqlite, .postgres] : [.sqlite] }

    var testDescription: String { rawValue }
}

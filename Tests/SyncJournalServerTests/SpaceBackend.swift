import Testing

/// The servers the spaces suite runs against: the in-memory reference
/// server and every storage backend the semantics suite covers.
enum SpaceBackend: String, Sendable, CustomTestStringConvertible {
    case reference
    case sqlite
    case postgres

    /// The reference server, SQLite, and PostgreSQL when it runs (see ``StorageBackend/tested``).
    static var tested: [SpaceBackend] { [.reference] + StorageBackend.tested.map { $0 == .sqlite ? .sqlite : .postgres } }

    var testDescription: String { rawValue }
}

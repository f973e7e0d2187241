/// The steps that lead a ``SyncRecord`` type from the version before `version` to
/// `version`, listed in the type's ``SyncRecord/migrations``.
///
/// ```swift
/// static let migrations = [
///     RecordMigration(to: 2, [.renameField("text", to: "body"), .addField("pinned", default: false)]),
/// ]
/// ```
public struct RecordMigration: Sendable {
    /// The version these steps lead to, from the one before it.
    public let version: Int
    /// The steps, applied in order.
    public let steps: [MigrationStep]

    /// The steps from version `version - 1` to `version`.
    public init(to version: Int, _ steps: [MigrationStep]) {
        self.version = version
        self.steps = steps
    }
}

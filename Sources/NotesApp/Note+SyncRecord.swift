import SyncJournal

extension Note: SyncRecord {
    /// Notes are records of kind `note`.
    public static let kind = "note"
    /// Version 2: the body has its own name and notes can be pinned.
    public static let schemaVersion = 2
    /// From version 1: `text` is now `body` (still stored as `text`), and a
    /// note version 1 wrote is not pinned.
    public static let migrations = [
        RecordMigration(to: 2, [.renameField("text", to: "body"), .addField("pinned", default: false)]),
    ]
}

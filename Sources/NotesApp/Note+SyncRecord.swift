import SyncJournal

extension Note: SyncRecord {
    /// Notes are records of kind `note`.
    public static let kind = "note"
}

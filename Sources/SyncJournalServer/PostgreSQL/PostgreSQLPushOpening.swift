import SyncJournalProtocol

/// What a push reads under its user's stamp lock before applying anything:
/// the user's last stamp, the database's clock, the remembered results of
/// the push's operation ids and the stored rows it names.
struct PostgreSQLPushOpening {
    /// The last stamp issued to the pushing user.
    var lastStamp: Int64
    /// The database server's clock, in milliseconds.
    var databaseNow: Int64
    /// Remembered results by operation id.
    var remembered: [String: ServerRow]
    /// Stored rows (any owner) by record.
    var rows: [RecordKey: OwnedRow]
}
